// symmem._C: the C++ library as Python sees it. No libtorch: tensors cross as raw pointers and
// CUDA streams as integers; symmetric memory leaves as DLPack capsules (any framework can take
// them), so one build serves every PyTorch version. The Python layer (symmem/__init__.py) turns
// these into tensors and torch.library operators.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "symmem/symmem.hpp"

namespace py = pybind11;
using namespace symmem;

namespace {

cudaStream_t as_stream(uintptr_t s) { return reinterpret_cast<cudaStream_t>(s); }
template <class T>
T* as_ptr(uintptr_t p) { return reinterpret_cast<T*>(p); }

// torch.distributed's Store (or any object with set(key, bytes) and get(key, timeout_ms) -> bytes
// or None, and optionally remove(key)), seen by the C++ bootstrap.
class PyStore : public ExternalStore {
 public:
  explicit PyStore(py::object o) : obj_(std::move(o)) {}
  ~PyStore() override {
    if (!Py_IsInitialized()) {
      obj_.release();  // the interpreter is gone: leak rather than touch it
      return;
    }
    py::gil_scoped_acquire g;
    obj_ = py::object();
  }
  void set(const std::string& k, const std::string& v) override {
    py::gil_scoped_acquire g;
    obj_.attr("set")(k, py::bytes(v));
  }
  bool get(const std::string& k, int timeout_ms, std::string* v) override {
    py::gil_scoped_acquire g;
    py::object r = obj_.attr("get")(k, timeout_ms);
    if (r.is_none()) return false;
    *v = r.cast<std::string>();
    return true;
  }
  void remove(const std::string& k) override {  // where the object has remove(key)
    py::gil_scoped_acquire g;
    if (py::hasattr(obj_, "remove")) obj_.attr("remove")(k);
  }

 private:
  py::object obj_;
};

// A symmetric buffer that frees itself (free_async on the stream given, or the legacy stream).
// It keeps its communicator alive (py::keep_alive on alloc).
struct PyBuffer {
  Communicator* comm;
  SymmetricBuffer buf;
  int device;
  ~PyBuffer() { release(0); }
  void release(uintptr_t stream) {
    if (!buf.valid()) return;
    try {
      comm->heap().free_async(buf, as_stream(stream));
    } catch (...) {
      // Freed already, or the heap is gone: nothing to give back.
    }
  }
  const SymmetricBuffer& live() const {
    require(buf.valid(), "the symmetric buffer was freed");
    return buf;
  }
};

// ---- DLPack (the ABI, declared here: no dlpack header needed) ----------------------------------
struct DLDevice { int32_t device_type; int32_t device_id; };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
constexpr int32_t kDLCUDA = 2;

struct Managed {
  DLManagedTensor t;
  int64_t shape[1];
  PyObject* owner;
};

void managed_deleter(DLManagedTensor* t) {
  auto* m = reinterpret_cast<Managed*>(t);
  if (Py_IsInitialized()) {
    PyGILState_STATE s = PyGILState_Ensure();
    Py_XDECREF(m->owner);
    PyGILState_Release(s);
  }
  delete m;
}

void capsule_destructor(PyObject* cap) {
  // Never consumed (renamed to "used_dltensor" by the consumer): free it here.
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (t && t->deleter) t->deleter(t);
  }
}

// A capsule for `count` elements (code: 0 int, 1 uint, 2 float; bits) at `ptr` on `device`,
// keeping `owner` alive while any consumer holds it.
py::object dlpack(uintptr_t ptr, int64_t count, int device, py::object owner, int code, int bits) {
  require(ptr != 0, "dlpack: null pointer");
  require(count >= 0, "dlpack: negative element count");
  auto* m = new Managed{};
  m->shape[0] = count;
  m->t.dl_tensor = DLTensor{as_ptr<void>(ptr), DLDevice{kDLCUDA, device}, 1,
                            DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1}, m->shape, nullptr, 0};
  m->owner = owner.release().ptr();  // the reference the deleter drops
  m->t.manager_ctx = m;
  m->t.deleter = managed_deleter;
  PyObject* cap = PyCapsule_New(&m->t, "dltensor", capsule_destructor);
  if (!cap) {
    managed_deleter(&m->t);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

DataType dtype_of(int d) {
  require(d >= 0 && d <= static_cast<int>(kLastDataType), "dtype code ", d, " is not a symmem dtype");
  return static_cast<DataType>(d);
}
ReduceOp op_of(const std::string& s) { return parse_redop(s); }
Algo algo_of(const std::string& s) { return parse_algo(s); }

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "symmem's C++ library (pointers and streams as integers; see the symmem package)";

  // Errors: the base first; pybind11 tries the translators registered last first, so every
  // subclass is caught as itself.
  auto& error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<CudaError>(m, "CudaError", error.ptr());
  py::register_exception<SystemError>(m, "SystemError", error.ptr());
  py::register_exception<InvalidArgument>(m, "InvalidArgument", error.ptr());
  py::register_exception<Timeout>(m, "Timeout", error.ptr());
  py::register_exception<PeerLost>(m, "PeerLost", error.ptr());
  py::register_exception<Unsupported>(m, "Unsupported", error.ptr());

  m.def("dlpack", &dlpack, py::arg("ptr"), py::arg("count"), py::arg("device"), py::arg("owner"), py::arg("code") = 1,
        py::arg("bits") = 8, "A DLPack capsule over device memory that keeps `owner` alive.");
  m.def("env_vars", [] {
    py::list l;
    for (auto& v : env_vars()) l.append(py::make_tuple(v.name, v.default_value ? v.default_value : "", v.doc));
    return l;
  });
  // How this process joins from its environment (symmem.init() reads it to join torchrun's agent store).
  m.def("bootstrap_from_env", [] {
    BootstrapConfig c = bootstrap_config_from_env();
    py::dict d;
    d["rank"] = c.rank;
    d["world_size"] = c.world_size;
    d["local_rank"] = c.local_rank;
    d["local_world_size"] = c.local_world_size;
    d["device"] = c.device >= 0 ? c.device : c.local_rank / c.ranks_per_gpu;
    d["master_addr"] = c.master_addr;
    d["agent_port"] = c.agent_port;
    d["timeout_ms"] = c.timeout_ms;
    return d;
  });
  m.def("device_count", [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  });

  py::class_<Context, std::shared_ptr<Context>>(m, "Context")
      .def_static("from_env", &Context::init, "Joins from torchrun / mpirun / symmem-run's environment.")
      .def_static(
          "from_store",
          [](py::object store, int rank, int world_size, int local_rank, int local_world_size, int device, int timeout_ms,
             const std::string& prefix) {
            BootstrapConfig c;
            c.rank = rank;
            c.world_size = world_size;
            c.local_rank = local_rank;
            c.local_world_size = local_world_size;
            c.device = device;
            c.timeout_ms = timeout_ms > 0 ? timeout_ms : bootstrap_timeout_ms_from_env();  // every host rendezvous
            auto boot = std::make_shared<Bootstrap>(c, std::make_shared<PyStore>(std::move(store)), prefix);
            return std::make_shared<Context>(boot);
          },
          py::arg("store"), py::arg("rank"), py::arg("world_size"), py::arg("local_rank"), py::arg("local_world_size"),
          py::arg("device"), py::arg("timeout_ms") = 0, py::arg("prefix") = "symmem/")
      .def_property_readonly("rank", &Context::rank)
      .def_property_readonly("size", &Context::size)
      .def_property_readonly("device", &Context::device)
      .def("set_device_timeout_ms", &Context::set_device_timeout_ms)
      .def_property_readonly("timeout_ms", [](const Context& c) { return c.settings().device_timeout_ms; })
      .def("check", &Context::check, py::arg("op") = "")
      .def("synchronize", [](Context& c, uintptr_t s, const std::string& op) { c.synchronize(as_stream(s), op); },
           py::arg("stream") = 0, py::arg("op") = "", py::call_guard<py::gil_scoped_release>())
      .def("reset_error", &Context::reset_error);

  py::class_<PyBuffer>(m, "Buffer")
      .def_property_readonly("ptr", [](const PyBuffer& b) { return reinterpret_cast<uintptr_t>(b.live().ptr()); })
      .def_property_readonly("nbytes", [](const PyBuffer& b) { return b.live().bytes(); })
      .def_property_readonly("rank", [](const PyBuffer& b) { return b.live().rank(); })
      .def_property_readonly("nranks", [](const PyBuffer& b) { return b.live().nranks(); })
      .def_property_readonly("device", [](const PyBuffer& b) { return b.device; })
      .def_property_readonly("valid", [](const PyBuffer& b) { return b.buf.valid(); })
      .def("peer_ptr", [](const PyBuffer& b, int p) { return reinterpret_cast<uintptr_t>(b.live().peer_ptr(p)); })
      .def("signal_pad_ptr", [](const PyBuffer& b, int p) { return reinterpret_cast<uintptr_t>(b.live().peer_signal_pad(p)); })
      .def_property_readonly("peer_ptrs_dev", [](const PyBuffer& b) { return reinterpret_cast<uintptr_t>(b.live().handle().peers); },
                             "device array [nranks] of every peer's pointer (uint64), for your own kernels")
      .def_property_readonly("signal_pad_ptrs_dev", [](const PyBuffer& b) { return reinterpret_cast<uintptr_t>(b.live().handle().signals); },
                             "device array [nranks] of every peer's signal pad (uint64*)")
      .def_property_readonly_static("signal_pad_bytes", [](py::object) { return pad::kBytes; })
      .def_property_readonly_static("user_signal_slots", [](py::object) { return pad::kUserSlots; })
      .def("free", &PyBuffer::release, py::arg("stream") = 0,
           "Gives the memory back once the stream's work so far is done (local: never waits for a peer).");

  py::class_<Communicator>(m, "Communicator")
      .def(py::init([](std::shared_ptr<Context> c, size_t ll_max_bytes) {
             CommOptions o;
             if (ll_max_bytes) o.ll_max_bytes = ll_max_bytes;
             return std::make_unique<Communicator>(std::move(c), o);
           }),
           py::arg("context"), py::arg("ll_max_bytes") = 0)
      .def("split", &Communicator::split, py::arg("color"), py::arg("key"), py::keep_alive<0, 1>())
      .def_property_readonly("rank", &Communicator::rank)
      .def_property_readonly("size", &Communicator::size)
      .def_property_readonly("has_nccl", &Communicator::has_nccl)
      .def_property_readonly("global_ranks", [](const Communicator& c) { return c.team().global_ranks(); })
      .def("failure", &Communicator::failure)
      .def("abort", &Communicator::abort)
      .def("set_timeout_ms", &Communicator::set_timeout_ms)
      .def("mapped_bytes", [](Communicator& c) { return c.heap().mapped_bytes(); })
      .def("barrier_host", [](Communicator& c, const std::string& what) { c.team().barrier(what); }, py::arg("what") = "barrier")
      // Raises InvalidArgument on every member unless every member passed the same `mine` (host
      // exchange; for arguments of the package's own collective calls, such as new_group's ranks).
      .def("require_same", [](Communicator& c, const std::string& mine, const std::string& what, const std::string& hint) {
        c.team().require_same(mine, what, "", "", hint);
      }, py::arg("mine"), py::arg("what"), py::arg("hint") = "")
      .def(
          "alloc",
          [](Communicator& c, size_t bytes) {
            auto b = std::make_unique<PyBuffer>();
            b->comm = &c;
            b->buf = c.alloc(bytes);
            b->device = c.context().device();
            return b;
          },
          py::arg("nbytes"), py::keep_alive<0, 1>())
      .def("select",
           [](const Communicator& c, const std::string& op, int dtype, size_t bytes, bool in_sym, bool out_sym, bool in_place) {
             return std::string(algo_name(c.select(parse_coll(op), dtype_of(dtype), bytes, in_sym, out_sym, in_place)));
           })
      .def("all_reduce",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t count, int dtype, const std::string& op, uintptr_t s,
              const std::string& algo) { c.all_reduce(as_ptr<const void>(in), as_ptr<void>(out), count, dtype_of(dtype), op_of(op), as_stream(s), algo_of(algo)); },
           py::arg("inp"), py::arg("out"), py::arg("count"), py::arg("dtype"), py::arg("op"), py::arg("stream"), py::arg("algo") = "auto")
      .def("reduce_scatter",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t count, int dtype, const std::string& op, uintptr_t s,
              const std::string& algo) { c.reduce_scatter(as_ptr<const void>(in), as_ptr<void>(out), count, dtype_of(dtype), op_of(op), as_stream(s), algo_of(algo)); },
           py::arg("inp"), py::arg("out"), py::arg("recv_count"), py::arg("dtype"), py::arg("op"), py::arg("stream"), py::arg("algo") = "auto")
      .def("all_gather",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t count, int dtype, uintptr_t s, const std::string& algo) {
             c.all_gather(as_ptr<const void>(in), as_ptr<void>(out), count, dtype_of(dtype), as_stream(s), algo_of(algo));
           },
           py::arg("inp"), py::arg("out"), py::arg("send_count"), py::arg("dtype"), py::arg("stream"), py::arg("algo") = "auto")
      .def("broadcast",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t count, int dtype, int root, uintptr_t s, const std::string& algo) {
             c.broadcast(as_ptr<const void>(in), as_ptr<void>(out), count, dtype_of(dtype), root, as_stream(s), algo_of(algo));
           },
           py::arg("inp"), py::arg("out"), py::arg("count"), py::arg("dtype"), py::arg("root"), py::arg("stream"), py::arg("algo") = "auto")
      .def("all_to_all",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t count, int dtype, uintptr_t s, const std::string& algo) {
             c.all_to_all(as_ptr<const void>(in), as_ptr<void>(out), count, dtype_of(dtype), as_stream(s), algo_of(algo));
           },
           py::arg("inp"), py::arg("out"), py::arg("count"), py::arg("dtype"), py::arg("stream"), py::arg("algo") = "auto")
      .def("all_to_all_v",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t out_count, uintptr_t send_counts, uintptr_t recv_counts,
              int dtype, uintptr_t s, const std::string& algo) {
             c.all_to_all_v(as_ptr<const void>(in), as_ptr<void>(out), out_count, as_ptr<const int64_t>(send_counts),
                            as_ptr<int64_t>(recv_counts), dtype_of(dtype), as_stream(s), algo_of(algo));
           },
           py::arg("inp"), py::arg("out"), py::arg("out_count"), py::arg("send_counts"), py::arg("recv_counts"), py::arg("dtype"),
           py::arg("stream"), py::arg("algo") = "auto")
      // The rooted operations: 0 for the buffer a rank does not pass (collectives.hpp says which).
      .def("reduce",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t count, int dtype, const std::string& op, int root, uintptr_t s,
              const std::string& algo) {
             c.reduce(as_ptr<const void>(in), as_ptr<void>(out), count, dtype_of(dtype), op_of(op), root, as_stream(s), algo_of(algo));
           },
           py::arg("inp"), py::arg("out"), py::arg("count"), py::arg("dtype"), py::arg("op"), py::arg("root"), py::arg("stream"),
           py::arg("algo") = "auto")
      .def("gather",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t count, int dtype, int root, uintptr_t s, const std::string& algo) {
             c.gather(as_ptr<const void>(in), as_ptr<void>(out), count, dtype_of(dtype), root, as_stream(s), algo_of(algo));
           },
           py::arg("inp"), py::arg("out"), py::arg("send_count"), py::arg("dtype"), py::arg("root"), py::arg("stream"), py::arg("algo") = "auto")
      .def("scatter",
           [](Communicator& c, uintptr_t in, uintptr_t out, size_t count, int dtype, int root, uintptr_t s, const std::string& algo) {
             c.scatter(as_ptr<const void>(in), as_ptr<void>(out), count, dtype_of(dtype), root, as_stream(s), algo_of(algo));
           },
           py::arg("inp"), py::arg("out"), py::arg("recv_count"), py::arg("dtype"), py::arg("root"), py::arg("stream"), py::arg("algo") = "auto");

  // Expert-parallel dispatch / combine (symmem/moe.hpp); the Python layer owns the tensors.
  py::class_<moe::ExpertParallel>(m, "ExpertParallel")
      .def(py::init([](Communicator& c, int hidden, int topk, int experts, int max_tokens, int capacity, bool fp8, bool ue8m0,
                       int round_tokens, int kernels) {
             moe::Config cfg;
             cfg.hidden = hidden;
             cfg.topk = topk;
             cfg.num_experts = experts;
             cfg.max_tokens = max_tokens;
             cfg.capacity = capacity;
             cfg.fp8 = fp8;
             cfg.ue8m0 = ue8m0;
             cfg.round_tokens = round_tokens;
             cfg.kernels = static_cast<moe::Kernels>(kernels);
             return std::make_unique<moe::ExpertParallel>(c, cfg);
           }),
           py::arg("comm"), py::arg("hidden"), py::arg("topk"), py::arg("num_experts"), py::arg("max_tokens"),
           py::arg("capacity") = 0, py::arg("fp8") = false, py::arg("ue8m0") = false,
           py::arg("round_tokens") = 0, py::arg("kernels") = 0, py::keep_alive<1, 2>())
      .def_property_readonly("one_kernel_per_round", &moe::ExpertParallel::one_kernel_per_round)
      .def_property_readonly("dispatch_one_kernel_per_round", &moe::ExpertParallel::dispatch_one_kernel_per_round)
      .def_property_readonly("dispatch_streamed", &moe::ExpertParallel::dispatch_streamed)
      .def_property_readonly("combine_streamed", &moe::ExpertParallel::combine_streamed)
      .def_property_readonly("dispatch_lines", &moe::ExpertParallel::dispatch_lines)
      .def_property_readonly("local_experts", &moe::ExpertParallel::local_experts)
      .def_property_readonly("capacity", &moe::ExpertParallel::capacity)
      .def_property_readonly("bytes_per_rank", &moe::ExpertParallel::bytes_per_rank)
      .def("dispatch_send",
           [](moe::ExpertParallel& ep, uintptr_t x, uintptr_t scales, uintptr_t idx, bool idx64, uintptr_t w, int tokens, uintptr_t s) {
             ep.dispatch_send({as_ptr<const void>(x), as_ptr<const void>(scales), as_ptr<const void>(idx), idx64, as_ptr<const float>(w), tokens},
                              as_stream(s));
           },
           py::arg("x"), py::arg("scales"), py::arg("topk_idx"), py::arg("idx_int64"), py::arg("topk_weights"), py::arg("tokens"),
           py::arg("stream"))
      .def("dispatch_recv",
           [](moe::ExpertParallel& ep, uintptr_t rx, uintptr_t rsc, uintptr_t counts, uintptr_t s) {
             ep.dispatch_recv({as_ptr<void>(rx), as_ptr<void>(rsc), as_ptr<int>(counts)}, as_stream(s));
           },
           py::arg("recv_x"), py::arg("recv_scales"), py::arg("expert_counts"), py::arg("stream"))
      .def("combine_send", [](moe::ExpertParallel& ep, uintptr_t y, bool weighted, uintptr_t s) {
             ep.combine_send(as_ptr<const void>(y), weighted, as_stream(s));
           }, py::arg("expert_out"), py::arg("weighted"), py::arg("stream"))
      .def("combine_recv", [](moe::ExpertParallel& ep, uintptr_t out, uintptr_t s) { ep.combine_recv(as_ptr<void>(out), as_stream(s)); },
           py::arg("out"), py::arg("stream"))
      .def("dispatch",
           [](moe::ExpertParallel& ep, uintptr_t x, uintptr_t scales, uintptr_t idx, bool idx64, uintptr_t w, int tokens, uintptr_t rx,
              uintptr_t rsc, uintptr_t counts, uintptr_t s) {
             ep.dispatch({as_ptr<const void>(x), as_ptr<const void>(scales), as_ptr<const void>(idx), idx64, as_ptr<const float>(w), tokens},
                         {as_ptr<void>(rx), as_ptr<void>(rsc), as_ptr<int>(counts)}, as_stream(s));
           })
      .def("combine", [](moe::ExpertParallel& ep, uintptr_t y, uintptr_t out, bool weighted, uintptr_t s) {
             ep.combine(as_ptr<const void>(y), as_ptr<void>(out), weighted, as_stream(s));
           });

  // Overlapped tensor-parallel GEMMs (symmem/overlap.hpp).
  auto mode_of = [](const std::string& m) {
    require(m == "auto" || m == "overlap" || m == "sequential", "mode='", m, "': use auto, overlap or sequential");
    return m == "overlap" ? overlap::Mode::kOverlap : m == "sequential" ? overlap::Mode::kSequential : overlap::Mode::kAuto;
  };
  py::class_<overlap::TensorParallel>(m, "TensorParallel")
      .def(py::init([](Communicator& c, int64_t max_m, int64_t max_k, int64_t max_n) {
             return std::make_unique<overlap::TensorParallel>(c, max_m, max_k, max_n);
           }),
           py::arg("comm"), py::arg("max_m"), py::arg("max_k"), py::arg("max_n"), py::keep_alive<1, 2>())
      .def("all_gather_matmul",
           [=](overlap::TensorParallel& t, uintptr_t a_shard, int64_t m, int64_t k, uintptr_t b, int64_t n, uintptr_t c, uintptr_t a_out,
               uintptr_t s, const std::string& mode, int dtype) {
             t.all_gather_matmul(as_ptr<const void>(a_shard), m, k, as_ptr<const void>(b), n, as_ptr<void>(c), as_ptr<void>(a_out),
                                 as_stream(s), mode_of(mode), dtype_of(dtype));
           },
           py::arg("a_shard"), py::arg("m"), py::arg("k"), py::arg("b"), py::arg("n"), py::arg("c"), py::arg("a_out"), py::arg("stream"),
           py::arg("mode") = "auto", py::arg("dtype") = static_cast<int>(DataType::kBFloat16))
      .def("matmul_reduce_scatter",
           [=](overlap::TensorParallel& t, uintptr_t a, int64_t m, int64_t k, uintptr_t b, int64_t n, uintptr_t c, const std::string& op,
               uintptr_t s, const std::string& mode, int dtype) {
             t.matmul_reduce_scatter(as_ptr<const void>(a), m, k, as_ptr<const void>(b), n, as_ptr<void>(c), op_of(op), as_stream(s),
                                     mode_of(mode), dtype_of(dtype));
           },
           py::arg("a"), py::arg("m"), py::arg("k"), py::arg("b"), py::arg("n"), py::arg("c_shard"), py::arg("op"), py::arg("stream"),
           py::arg("mode") = "auto", py::arg("dtype") = static_cast<int>(DataType::kBFloat16));

  // One-sided operations on a stream (capturable in CUDA graphs).
  auto engine_of = [](const std::string& e) {
    require(e == "sm" || e == "ce", "engine='", e, "': use 'sm' (a copy kernel) or 'ce' (the copy engines)");
    return e == "sm" ? Engine::kSM : Engine::kCopyEngine;
  };
  auto cmp_of = [](const std::string& c) {
    static const char* names[] = {"eq", "ne", "ge", "gt", "le", "lt"};
    for (int i = 0; i < 6; ++i)
      if (c == names[i]) return static_cast<Cmp>(i);
    fail("cmp='" + c + "': use one of eq, ne, ge, gt, le, lt");
  };
  auto sigop_of = [](const std::string& o) {
    require(o == "set" || o == "add", "signal op='", o, "': use 'set' or 'add'");
    return o == "set" ? SignalOp::kSet : SignalOp::kAdd;
  };
  m.def("put", [=](const PyBuffer& dst, int peer, size_t off, uintptr_t src, size_t bytes, uintptr_t s, const std::string& e) {
    stream::put(dst.live(), peer, off, as_ptr<const void>(src), bytes, as_stream(s), engine_of(e));
  }, py::arg("dst"), py::arg("peer"), py::arg("dst_offset"), py::arg("src"), py::arg("nbytes"), py::arg("stream"), py::arg("engine") = "sm");
  m.def("get", [=](uintptr_t dst, const PyBuffer& src, int peer, size_t off, size_t bytes, uintptr_t s, const std::string& e) {
    stream::get(as_ptr<void>(dst), src.live(), peer, off, bytes, as_stream(s), engine_of(e));
  }, py::arg("dst"), py::arg("src"), py::arg("peer"), py::arg("src_offset"), py::arg("nbytes"), py::arg("stream"), py::arg("engine") = "sm");
  m.def("put_signal", [=](const PyBuffer& dst, int peer, size_t off, uintptr_t src, size_t bytes, int slot, uint64_t value,
                          const std::string& op, uintptr_t s, const std::string& e) {
    stream::put_signal(dst.live(), peer, off, as_ptr<const void>(src), bytes, slot, value, sigop_of(op), as_stream(s), engine_of(e));
  }, py::arg("dst"), py::arg("peer"), py::arg("dst_offset"), py::arg("src"), py::arg("nbytes"), py::arg("slot"), py::arg("value"),
     py::arg("op"), py::arg("stream"), py::arg("engine") = "sm");
  m.def("signal", [=](const PyBuffer& b, int peer, int slot, uint64_t value, const std::string& op, uintptr_t s) {
    stream::signal(b.live(), peer, slot, value, sigop_of(op), as_stream(s));
  }, py::arg("buf"), py::arg("peer"), py::arg("slot"), py::arg("value"), py::arg("op"), py::arg("stream"));
  m.def("wait", [=](const PyBuffer& b, int slot, const std::string& cmp, uint64_t value, uintptr_t s) {
    stream::wait(b.live(), slot, cmp_of(cmp), value, as_stream(s));
  }, py::arg("buf"), py::arg("slot"), py::arg("cmp"), py::arg("value"), py::arg("stream"));
  m.def("barrier", [](const PyBuffer& b, uintptr_t s) { stream::barrier(b.live(), as_stream(s)); }, py::arg("buf"), py::arg("stream"));
}
