// The rooted collectives (reduce, gather, scatter) against host references on random data: every
// dtype and reduction (reduce), every algorithm with the buffers it takes, every root, in place on
// the root, non-roots passing no buffer where they may, and their outputs untouched where they
// pass one; outputs poisoned first; the refusals named on every rank; a captured graph replayed.
#include <cstring>

#include "reference.hpp"

using namespace symmem;
using namespace symmem::test;

namespace {

/// "" where the `bytes` at p still hold the poison (0xFF), else what changed.
std::string untouched(const void* p, size_t bytes) {
  const auto got = download(p, bytes);
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != 0xFF) return "a non-root's buffer was written at byte " + std::to_string(i);
  return "";
}

}  // namespace

// reduce: every type and reduction, sizes with tails, each algorithm, every root in turn.
// Non-roots pass no output on odd seeds and a poisoned one, which must stay so, on even seeds.
TEST(Rooted, ReduceEveryTypeOpAlgorithmAndRoot) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t cap = 70000 * 8 + 64;
  SymmetricBuffer in = c.alloc(cap), out = c.alloc(cap);
  DeviceBuffer plain_in(cap), plain_out(cap);
  uint64_t seed = 7000;
  for (DataType d : kReduceTypes)
    for (ReduceOp op : kOps)
      for (size_t count : {size_t(1), size_t(33), size_t(4099), size_t(65537)}) {
        ++seed;
        const int root = static_cast<int>(seed % n);
        const size_t bytes = count * dtype_size(d);
        std::vector<std::vector<uint8_t>> ins;
        for (int r = 0; r < n; ++r) ins.push_back(random_elems(d, count, seed * 64 + r, op));
        std::vector<std::pair<Algo, bool>> runs = {{Algo::kLL, false}, {Algo::kOneShot, true}, {Algo::kAuto, true}, {Algo::kAuto, false}};
        if (have_nccl() && nccl_beside(d, op)) runs.push_back({Algo::kNccl, false});
        for (const auto& run_ : runs) {
          const auto algo = run_.first;
          const auto sym = run_.second;
          void* ip = sym ? in.ptr() : plain_in.p;
          void* op_ = sym ? out.ptr() : plain_out.p;
          const bool pass_out = me == root || seed % 2 == 0;
          upload(ip, ins[me]);
          poison(op_, bytes);
          std::string why = attempt([&] {
            c.reduce(ip, pass_out ? op_ : nullptr, count, d, op, root, nullptr, algo);
            ctx()->synchronize(nullptr, "reduce");
          });
          // (8-byte types past LL's narrow capacity: refused by name, as the all-reduce's)
          long bad = 0;
          if (why.empty() && me == root) bad = check_reduced(d, op, ins, 0, download(op_, bytes), count, n, &why, steps_of(algo, n));
          else if (why.empty() && pass_out) why = untouched(op_, bytes);
          ASSERT_ALL(bad == 0 && why.empty(), "reduce " << dtype_name(d) << " " << redop_name(op) << " count " << count << " root "
                                                        << root << " algo " << algo_name(algo) << (sym ? " symmetric" : " plain")
                                                        << ": " << bad << " wrong; " << why);
        }
      }
  c.free(in);
  c.free(out);
}

// gather and scatter: bytes of three widths, every algorithm with the buffers it takes (push and
// direct need the root's buffer's address on every rank), every root in turn, up to past the LL
// capacity (1 MiB a peer), where LL is not asked for.
TEST(Rooted, GatherScatterEveryAlgorithmAndRoot) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t cap = size_t(n) * ((size_t(3) << 20) + 64);
  SymmetricBuffer sym_in = c.alloc(cap), sym_out = c.alloc(cap);
  DeviceBuffer plain_in(cap), plain_out(cap);
  uint64_t seed = 9100;
  for (DataType d : {DataType::kBFloat16, DataType::kUInt8, DataType::kFloat32})
    for (size_t count : movement_counts(d)) {
      const size_t es = dtype_size(d), chunk = count * es;
      const int root = static_cast<int>(++seed % n);
      std::vector<std::vector<uint8_t>> ins;
      for (int r = 0; r < n; ++r) ins.push_back(random_bytes(chunk * n, seed * 64 + r));
      // (algorithm, symmetric input, symmetric output)
      struct Run {
        Algo algo;
        bool sym_in, sym_out;
      };
      std::vector<Run> runs = {{Algo::kDirect, true, false}, {Algo::kPush, false, true}, {Algo::kAuto, true, true},
                               {Algo::kAuto, false, false}, {Algo::kAuto, true, false}, {Algo::kAuto, false, true}};
      if (chunk <= (size_t(1) << 20)) runs.push_back({Algo::kLL, false, false});
      if (have_nccl()) runs.push_back({Algo::kNccl, false, false});
      for (const Run& run : runs) {
        void* ip = run.sym_in ? sym_in.ptr() : plain_in.p;
        void* op_ = run.sym_out ? sym_out.ptr() : plain_out.p;
        const std::string what = std::string(dtype_name(d)) + " count " + std::to_string(count) + " root " + std::to_string(root) +
                                 " algo " + algo_name(run.algo) + (run.sym_in ? " in symmetric" : " in plain") +
                                 (run.sym_out ? " out symmetric" : " out plain");
        // Ordinary buffers past the LL capacity have no path but NCCL: refused (alike on every
        // rank) where ranks share a GPU.
        auto no_path = [&](const std::string& why) { return !have_nccl() && why.find("no NCCL communicator") != std::string::npos; };
        // gather: every rank's first chunk to the root. A non-root passes an output only for push
        // (the root's address), poisoned, which must stay so there.
        upload(ip, std::vector<uint8_t>(ins[me].begin(), ins[me].begin() + chunk));
        poison(op_, chunk * n);
        const bool gather_out = me == root || run.algo == Algo::kPush;
        std::string why = attempt([&] {
          c.gather(ip, gather_out ? op_ : nullptr, count, d, root, nullptr, run.algo);
          ctx()->synchronize(nullptr, "gather");
        });
        if (why.empty() && me == root) {
          why = rank_order_mismatch(ins, chunk, download(op_, chunk * n));
        } else if (why.empty() && gather_out) {
          why = untouched(op_, chunk * n);
        }
        if (!no_path(why)) ASSERT_ALL(why.empty(), "gather " << what << ": " << why);
        // scatter: chunk r of the root's input to rank r. A non-root passes an input only for
        // direct (the root's address).
        const bool scatter_in = me == root || run.algo == Algo::kDirect;
        upload(ip, ins[me]);
        poison(op_, chunk);
        why = attempt([&] {
          c.scatter(scatter_in ? ip : nullptr, op_, count, d, root, nullptr, run.algo);
          ctx()->synchronize(nullptr, "scatter");
        });
        if (why.empty() && !std::equal(ins[root].begin() + me * chunk, ins[root].begin() + (me + 1) * chunk, download(op_, chunk).begin()))
          why = "wrong data";
        if (!no_path(why)) ASSERT_ALL(why.empty(), "scatter " << what << ": " << why);
      }
    }
  c.free(sym_in);
  c.free(sym_out);
}

// In place on the root, every algorithm: reduce in == out; gather in == out + root * count;
// scatter out == in + root * count. Every rank lays its buffers out alike (the symmetric forms
// find the root's buffer at this rank's offset).
TEST(Rooted, InPlaceOnTheRoot) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t count = 3001, es = 4, chunk = count * es;
  SymmetricBuffer buf = c.alloc(chunk * n + 64);
  DeviceBuffer plain(chunk * n + 64);
  uint64_t seed = 9900;
  for (int root = 0; root < n; ++root) {
    std::vector<std::vector<uint8_t>> ins;
    ++seed;
    for (int r = 0; r < n; ++r) ins.push_back(random_elems(DataType::kFloat32, count * n, seed * 64 + r, ReduceOp::kSum));
    struct Run {
      Algo algo;
      bool sym;
    };
    std::vector<Run> reduce_runs = {{Algo::kLL, false}, {Algo::kOneShot, true}, {Algo::kAuto, true}};
    std::vector<Run> move_runs = {{Algo::kLL, false}, {Algo::kDirect, true}, {Algo::kPush, true}, {Algo::kAuto, true}};
    if (have_nccl()) {
      reduce_runs.push_back({Algo::kNccl, false});
      move_runs.push_back({Algo::kNccl, false});
    }
    for (const Run& run : reduce_runs) {
      char* b = static_cast<char*>(run.sym ? buf.ptr() : plain.p);
      std::vector<uint8_t> mine(ins[me].begin(), ins[me].begin() + chunk);
      upload(b, mine);
      std::string why = attempt([&] {
        c.reduce(b, b, count, DataType::kFloat32, ReduceOp::kSum, root, nullptr, run.algo);
        ctx()->synchronize(nullptr, "reduce in place");
      });
      long bad = 0;
      if (why.empty() && me == root)
        bad = check_reduced(DataType::kFloat32, ReduceOp::kSum, ins, 0, download(b, chunk), count, n, &why, steps_of(run.algo, n));
      else if (why.empty() && download(b, chunk) != mine)
        why = "a non-root's input changed";
      ASSERT_ALL(bad == 0 && why.empty(), "reduce in place root " << root << " algo " << algo_name(run.algo) << ": " << bad << " wrong; " << why);
    }
    for (const Run& run : move_runs) {
      char* b = static_cast<char*>(run.sym ? buf.ptr() : plain.p);
      // gather: this rank's chunk at slot `root` of the buffer (the root's in-place input).
      poison(b, chunk * n);
      upload(b + root * chunk, std::vector<uint8_t>(ins[me].begin(), ins[me].begin() + chunk));
      std::string why = attempt([&] {
        c.gather(b + root * chunk, me == root || run.algo == Algo::kPush ? b : nullptr, count, DataType::kFloat32, root, nullptr, run.algo);
        ctx()->synchronize(nullptr, "gather in place");
      });
      if (why.empty() && me == root) {
        why = rank_order_mismatch(ins, chunk, download(b, chunk * n));
      }
      ASSERT_ALL(why.empty(), "gather in place root " << root << " algo " << algo_name(run.algo) << ": " << why);
      // scatter: the root's output is its input's slot `root`.
      upload(b, ins[me]);
      why = attempt([&] {
        c.scatter(me == root || run.algo == Algo::kDirect ? b : nullptr, b + root * chunk, count, DataType::kFloat32, root, nullptr,
                  run.algo);
        ctx()->synchronize(nullptr, "scatter in place");
      });
      if (why.empty() && !std::equal(ins[root].begin() + me * chunk, ins[root].begin() + (me + 1) * chunk, download(b + root * chunk, chunk).begin()))
        why = "wrong data";
      ASSERT_ALL(why.empty(), "scatter in place root " << root << " algo " << algo_name(run.algo) << ": " << why);
    }
  }
  c.free(buf);
}

// The refusals, on every rank, before anything is launched.
TEST(Rooted, BadArgumentsAreRefused) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  SymmetricBuffer s_in = c.alloc(4096 * n), s_out = c.alloc(4096 * n);
  DeviceBuffer p_in(4096 * n), p_out(4096 * n);
  const DataType f = DataType::kFloat32;
  std::string why;
  why += refusal("reduce root=n", [&] { c.reduce(s_in.ptr(), s_out.ptr(), 16, f, ReduceOp::kSum, n, nullptr); });
  why += refusal("gather root=-1", [&] { c.gather(s_in.ptr(), s_out.ptr(), 16, f, -1, nullptr); });
  why += refusal("scatter root=n", [&] { c.scatter(s_in.ptr(), s_out.ptr(), 16, f, n, nullptr); });
  // The root's own buffers (missing, or overlapping other than in place) are checked on the root
  // alone: without SYMMEM_DEBUG_CHECKS only the root makes these calls (the others' would run);
  // with it every rank does, the others with good buffers, and the root's refusal reaches all.
  const bool checked = ctx()->settings().debug_checks;
  auto on_root = [&](const char* what, auto call) {  // call(bad): the call, with the bad buffers where bad
    if (checked) why += refusal(what, [&] { call(me == 0); });
    else if (me == 0) why += refusal(what, [&] { call(true); });
  };
  char* o = static_cast<char*>(s_out.ptr());
  char* i = static_cast<char*>(s_in.ptr());
  on_root("reduce out=null on the root", [&](bool bad) { c.reduce(i, bad ? nullptr : o, 16, f, ReduceOp::kSum, 0, nullptr); });
  on_root("scatter in=null on the root", [&](bool bad) { c.scatter(bad ? nullptr : i, o, 16, f, 0, nullptr); });
  on_root("gather in inside out, not at the root's slot", [&](bool bad) { c.gather(bad ? o + 4 : i, o, 16, f, 0, nullptr); });
  on_root("scatter out inside in, not at the root's slot", [&](bool bad) { c.scatter(i, bad ? i + 4 : o, 16, f, 0, nullptr); });
  on_root("reduce in and out overlapping partially", [&](bool bad) { c.reduce(i, bad ? i + 4 : o, 16, f, ReduceOp::kSum, 0, nullptr); });
  // Forms that need the root's buffer's address on every rank.
  why += refusal("gather push, plain out", [&] { c.gather(s_in.ptr(), p_out.p, 16, f, 0, nullptr, Algo::kPush); });
  why += refusal("gather push, out=null", [&] { c.gather(s_in.ptr(), nullptr, 16, f, 0, nullptr, Algo::kPush); });
  why += refusal("scatter direct, plain in", [&] { c.scatter(p_in.p, s_out.ptr(), 16, f, 0, nullptr, Algo::kDirect); });
  why += refusal("gather direct, plain in", [&] { c.gather(p_in.p, s_out.ptr(), 16, f, 0, nullptr, Algo::kDirect); });
  why += refusal("reduce one_shot, plain in", [&] { c.reduce(p_in.p, s_out.ptr(), 16, f, ReduceOp::kSum, 0, nullptr, Algo::kOneShot); });
  why += refusal("reduce push", [&] { c.reduce(s_in.ptr(), s_out.ptr(), 16, f, ReduceOp::kSum, 0, nullptr, Algo::kPush); });
  why += refusal("reduce direct", [&] { c.reduce(s_in.ptr(), s_out.ptr(), 16, f, ReduceOp::kSum, 0, nullptr, Algo::kDirect); });
  why += refusal("gather two_shot", [&] { c.gather(s_in.ptr(), s_out.ptr(), 16, f, 0, nullptr, Algo::kTwoShot); });
  why += refusal("reduce op=9", [&] { c.reduce(s_in.ptr(), s_out.ptr(), 16, f, static_cast<ReduceOp>(9), 0, nullptr); });
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  ASSERT_ALL(why.empty(), why);
  c.free(s_in);
  c.free(s_out);
}

// Captured in a CUDA graph (LL reduce, direct gather, push scatter, each from root 0), replayed
// with new inputs: the same calls give the new results.
TEST(Rooted, GraphCaptureReplaysWithNewData) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t count = 5000, chunk = count * 4;
  const int root = n - 1;
  SymmetricBuffer in = c.alloc(chunk * n), red = c.alloc(chunk), gat = c.alloc(chunk * n), sca = c.alloc(chunk);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g = nullptr;
  cudaGraphExec_t ge = nullptr;
  std::string why = agreed_step([&] {
    SYMMEM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    c.reduce(in.ptr(), red.ptr(), count, DataType::kFloat32, ReduceOp::kSum, root, s, Algo::kLL);
    c.gather(in.ptr(), gat.ptr(), count, DataType::kFloat32, root, s, Algo::kDirect);
    c.scatter(in.ptr(), sca.ptr(), count, DataType::kFloat32, root, s, Algo::kPush);
    SYMMEM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
    SYMMEM_CUDA_CHECK(cudaGraphInstantiate(&ge, g, 0));
    return std::string();
  });
  ASSERT_ALL(why.empty(), "capture: " << why);
  for (int replay = 0; replay < 3; ++replay) {
    std::vector<std::vector<uint8_t>> ins;
    for (int r = 0; r < n; ++r) ins.push_back(random_elems(DataType::kFloat32, count * n, 777 + replay * 64 + r, ReduceOp::kSum));
    why = agreed_step([&] {
      upload(in.ptr(), ins[me]);
      poison(red.ptr(), chunk);
      poison(gat.ptr(), chunk * n);
      poison(sca.ptr(), chunk);
      ctx()->world().barrier("rooted graph inputs");
      SYMMEM_CUDA_CHECK(cudaGraphLaunch(ge, s));
      ctx()->synchronize(s, "rooted graph replay");
      std::string w;
      if (me == root) {
        long bad = check_reduced(DataType::kFloat32, ReduceOp::kSum, ins, 0, download(red.ptr(), chunk), count, n, &w, 1);
        if (bad) w += " reduce: " + std::to_string(bad) + " wrong";
        const std::string g = rank_order_mismatch(ins, chunk, download(gat.ptr(), chunk * n));
        if (!g.empty()) w += " gather: " + g;
      }
      if (!std::equal(ins[root].begin() + me * chunk, ins[root].begin() + (me + 1) * chunk, download(sca.ptr(), chunk).begin()))
        w += " scatter: wrong data";
      return w;
    });
    ASSERT_ALL(why.empty(), "replay " << replay << ": " << why);
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  c.free(in);
  c.free(red);
  c.free(gat);
  c.free(sca);
}
