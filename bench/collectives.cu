// symmem-bench <collective>: symmem beside NCCL (plain buffers and NCCL symmetric windows) at
// every size, nccl-tests columns, the output checked in the same run.
#include <cmath>
#include <cstdio>

#include "../src/collectives/nccl_types.hpp"
#include "harness.hpp"
#include "symmem/device/reduce.cuh"

namespace symmem::bench {
namespace {

/// The range of a type's inputs: small integers, exact in every type, their sums and products over up
/// to 8 ranks too: in [-1, 1] for fp8 and int8, [0, 1] for uint8, [0, 8] for the other unsigned
/// types, [-8, 8] for the rest.
enum class Range { kTiny, kBit, kUnsigned, kSmall };
template <DataType D>
__host__ __device__ constexpr Range range_of() {
  return D == DataType::kFp8E4M3 || D == DataType::kFp8E5M2 || D == DataType::kInt8 ? Range::kTiny
         : D == DataType::kUInt8                                                     ? Range::kBit
         : D == DataType::kUInt32 || D == DataType::kUInt64                          ? Range::kUnsigned
                                                                                     : Range::kSmall;
}
/// Element i of rank r's input, in that range.
__host__ __device__ inline int value_of(int r, size_t i, Range range) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t(r) + 1) * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 29;
  switch (range) {
    case Range::kTiny: return int(x % 3) - 1;
    case Range::kBit: return int(x % 2);
    case Range::kUnsigned: return int(x % 9);
    default: return int(x % 17) - 8;
  }
}

template <DataType D>
__global__ void fill_kernel(void* p, size_t count, int r, size_t first) {
  using E = device::Elem<D>;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    static_cast<typename E::Raw*>(p)[i] = E::store(static_cast<typename E::Acc>(value_of(r, first + i, range_of<D>())));
}

struct Expect {
  CollOp op;
  ReduceOp redop;
  int nranks, me, root;
  size_t count;  // elements per rank chunk (AG, A2A) or of the message (AR, bcast) or recv count (RS)
};

template <DataType D>
__device__ float expected(const Expect& e, size_t i) {
  constexpr Range tiny = range_of<D>();
  switch (e.op) {
    case CollOp::kAllReduce:
    case CollOp::kReduce:
    case CollOp::kReduceScatter: {
      const size_t idx = e.op == CollOp::kReduceScatter ? e.me * e.count + i : i;
      float acc = float(value_of(0, idx, tiny));
      for (int r = 1; r < e.nranks; ++r) {
        float v = float(value_of(r, idx, tiny));
        acc = e.redop == ReduceOp::kMax ? fmaxf(acc, v) : e.redop == ReduceOp::kMin ? fminf(acc, v)
            : e.redop == ReduceOp::kProd ? acc * v : acc + v;
      }
      // (an integer type's average truncates toward zero)
      if (e.redop == ReduceOp::kAvg) return std::is_integral_v<typename device::Elem<D>::Acc> ? truncf(acc / e.nranks) : acc / e.nranks;
      return acc;
    }
    case CollOp::kAllGather:
    case CollOp::kGather: return float(value_of(int(i / e.count), i % e.count, tiny));
    case CollOp::kScatter: return float(value_of(e.root, e.me * e.count + i, tiny));
    case CollOp::kBroadcast: return float(value_of(e.root, i, tiny));
    default: return float(value_of(int(i / e.count), e.me * e.count + i % e.count, tiny));  // all-to-all(-v)
  }
}

template <DataType D>
__global__ void check_kernel(const void* p, size_t total, Expect e, unsigned long long* wrong) {
  using E = device::Elem<D>;
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
    const float want = expected<D>(e, i);
    const float got = float(E::load(static_cast<const typename E::Raw*>(p)[i]));
    // Exact but for avg, whose quotient rounds to the type.
    const float tol = e.redop == ReduceOp::kAvg ? 0.07f * fmaxf(1.f, fabsf(want)) : 0.f;
    bad += !(fabsf(got - want) <= tol);
  }
  if (bad) atomicAdd(wrong, bad);
}

template <class F>
void dispatch_type(DataType d, F&& f) {
  if (!dispatch_dtype(d, std::forward<F>(f))) fail("symmem-bench collectives: -d names no symmem type");
}

void nccl_ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) fail<Error>(std::string(what) + ": " + ncclGetErrorString(r));
}

double bus_factor(CollOp op, int n) {
  switch (op) {
    case CollOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CollOp::kBroadcast:
    case CollOp::kReduce: return 1.0;
    default: return double(n - 1) / n;  // (gather and scatter as nccl-tests: (n - 1) / n of the whole)
  }
}

}  // namespace

void run_collective(Harness& h, CollOp op, TuningTable* table) {
  const Options& o = h.opt();
  Communicator& c = h.comm();
  const DataType d = parse_dtype(o.dtype);
  const ReduceOp redop = parse_redop(o.redop);
  const bool reducing = coll_reducing(op);
  const int n = h.size(), me = h.rank();
  const size_t es = dtype_size(d), cap = o.max_bytes + 4096;
  ncclComm_t nc = h.nccl();
  const ncclDataType_t nt = detail::nccl_type(d);
  const ncclRedOp_t nr = detail::nccl_op(redop);

  SymmetricBuffer sin = c.alloc(cap), sout = c.alloc(cap), counts = c.alloc(sizeof(int64_t) * n);
  void *pin, *pout, *win_in, *win_out;
  SYMMEM_CUDA_CHECK(cudaMalloc(&pin, cap));
  SYMMEM_CUDA_CHECK(cudaMalloc(&pout, cap));
  nccl_ok(ncclMemAlloc(&win_in, cap), "ncclMemAlloc");
  nccl_ok(ncclMemAlloc(&win_out, cap), "ncclMemAlloc");
  ncclWindow_t wi, wo;
  nccl_ok(ncclCommWindowRegister(nc, win_in, cap, &wi, NCCL_WIN_COLL_SYMMETRIC), "ncclCommWindowRegister");
  nccl_ok(ncclCommWindowRegister(nc, win_out, cap, &wo, NCCL_WIN_COLL_SYMMETRIC), "ncclCommWindowRegister");
  unsigned long long* wrong_dev;
  SYMMEM_CUDA_CHECK(cudaMalloc(&wrong_dev, sizeof(*wrong_dev)));

  if (me == 0) {
    std::printf("# symmem-bench %s: %d ranks, %s, %s %s; time in us, busbw in GB/s; NCCL plain and NCCL symmetric windows\n",
                coll_name(op), n, h.gpu_name().c_str(), dtype_name(d), reducing ? redop_name(redop) : "-");
    std::printf("%12s %11s %6s | %9s %9s %8s %6s | %9s %8s | %9s %8s | %6s\n", "size", "count", "redop", "algo", "time", "busbw",
                "#wrong", "nccl", "busbw", "nccl_sym", "busbw", "ratio");
  }
  for (size_t size : h.sizes()) {
    // nccl-tests sizes: AR/bcast/reduce the message; AG/gather the gathered output; RS/scatter the
    // input; A2A each rank's buffer.
    const bool per_rank = coll_chunked(op) || op == CollOp::kAllToAllV;
    const size_t count = per_rank ? size / (es * n) : size / es;
    if (count == 0) continue;
    const size_t chunk = count * es, total = per_rank ? chunk * n : chunk;
    const size_t in_elems = op == CollOp::kAllGather || op == CollOp::kGather ? count : (per_rank ? count * n : count);
    const int root = n - 1;
    // (reduce and gather: only the root has an output to check)
    const size_t out_elems = op == CollOp::kReduceScatter || op == CollOp::kScatter ? count
                             : (op == CollOp::kReduce || op == CollOp::kGather) && me != root ? 0
                             : (per_rank ? count * n : count);
    // Inputs for symmem and both NCCL forms.
    dispatch_type(d, [&](auto D) {
      fill_kernel<D.value><<<264, 512, 0, h.stream()>>>(sin.ptr(), in_elems, me, 0);
      fill_kernel<D.value><<<264, 512, 0, h.stream()>>>(pin, in_elems, me, 0);
      fill_kernel<D.value><<<264, 512, 0, h.stream()>>>(win_in, in_elems, me, 0);
    });
    std::vector<int64_t> cnts(n, static_cast<int64_t>(count));
    SYMMEM_CUDA_CHECK(cudaMemcpyAsync(counts.ptr(), cnts.data(), sizeof(int64_t) * n, cudaMemcpyHostToDevice, h.stream()));
    h.ctx().synchronize(h.stream());
    h.team().barrier("bench inputs");

    auto run_symmem = [&](Algo a, cudaStream_t s) {
      switch (op) {
        case CollOp::kAllReduce: c.all_reduce(sin.ptr(), sout.ptr(), count, d, redop, s, a); break;
        case CollOp::kReduceScatter: c.reduce_scatter(sin.ptr(), sout.ptr(), count, d, redop, s, a); break;
        case CollOp::kAllGather: c.all_gather(sin.ptr(), sout.ptr(), count, d, s, a); break;
        case CollOp::kBroadcast: c.broadcast(sin.ptr(), sout.ptr(), count, d, root, s, a); break;
        case CollOp::kAllToAll: c.all_to_all(sin.ptr(), sout.ptr(), count, d, s, a); break;
        case CollOp::kAllToAllV: c.all_to_all_v(sin.ptr(), sout.ptr(), cap / es, counts.as<int64_t>(), nullptr, d, s, a); break;
        case CollOp::kReduce: c.reduce(sin.ptr(), sout.ptr(), count, d, redop, root, s, a); break;
        case CollOp::kGather: c.gather(sin.ptr(), sout.ptr(), count, d, root, s, a); break;
        case CollOp::kScatter: c.scatter(sin.ptr(), sout.ptr(), count, d, root, s, a); break;
      }
    };
    auto run_nccl = [&](const void* in, void* out, cudaStream_t s) {
      switch (op) {
        case CollOp::kAllReduce: nccl_ok(ncclAllReduce(in, out, count, nt, nr, nc, s), "ncclAllReduce"); break;
        case CollOp::kReduceScatter: nccl_ok(ncclReduceScatter(in, out, count, nt, nr, nc, s), "ncclReduceScatter"); break;
        case CollOp::kAllGather: nccl_ok(ncclAllGather(in, out, count, nt, nc, s), "ncclAllGather"); break;
        case CollOp::kBroadcast: nccl_ok(ncclBroadcast(in, out, count, nt, root, nc, s), "ncclBroadcast"); break;
        case CollOp::kReduce: nccl_ok(ncclReduce(in, out, count, nt, nr, root, nc, s), "ncclReduce"); break;
        case CollOp::kGather:
        case CollOp::kScatter:
          nccl_ok(detail::nccl_rooted_move(op == CollOp::kGather, in, out, chunk, root, nc, s), coll_name(op));
          break;
        default:
          ncclGroupStart();
          for (int p = 0; p < n; ++p) {
            ncclSend(static_cast<const char*>(in) + p * chunk, count, nt, p, nc, s);
            ncclRecv(static_cast<char*>(out) + p * chunk, count, nt, p, nc, s);
          }
          nccl_ok(ncclGroupEnd(), "ncclGroupEnd (all-to-all)");
      }
    };
    const int ops = total >= (size_t(256) << 20) ? 3 : total >= (size_t(16) << 20) ? 5 : o.iters;
    // Every symmem algorithm that can run here, then the one the table picks.
    std::vector<Algo> cands;
    const size_t ll_bytes = per_rank && op != CollOp::kAllToAllV ? chunk : total;
    for (Algo a : {Algo::kLL, Algo::kPush, Algo::kOneShot, Algo::kTwoShot, Algo::kTwoShotPush, Algo::kDirect})
      if (detail::algo_unfit(op, a, true, true, false, ll_bytes, size_t(1) << 20, n, d).empty()) cands.push_back(a);
    Row row{coll_name(op), dtype_name(d), "", total};
    double best = 1e30;
    Algo best_algo = Algo::kNccl;
    for (Algo a : cands) {
      double us = h.time_graph([&](cudaStream_t s) { run_symmem(a, s); }, ops);
      row.extra[std::string(algo_name(a)) + "_us"] = us;
      if (us < best) { best = us; best_algo = a; }
    }
    const Algo chosen = c.select(op, d, total, true, true, false);
    row.algo = algo_name(chosen);
    row.nccl_us = h.time_graph([&](cudaStream_t s) { run_nccl(pin, pout, s); }, ops);
    row.nccl_symm_us = h.time_graph([&](cudaStream_t s) { run_nccl(win_in, win_out, s); }, ops);
    row.symmem_us = chosen == Algo::kNccl ? row.nccl_us : row.extra.count(std::string(algo_name(chosen)) + "_us")
                                                              ? row.extra[std::string(algo_name(chosen)) + "_us"]
                                                              : h.time_graph([&](cudaStream_t s) { run_symmem(chosen, s); }, ops);
    const double bf = bus_factor(op, n);
    row.symmem_gbps = total / row.symmem_us / 1000.0 * bf;
    row.nccl_gbps = total / std::min(row.nccl_us, row.nccl_symm_us) / 1000.0 * bf;
    row.extra["nccl_plain_busbw"] = total / row.nccl_us / 1000.0 * bf;
    row.extra["nccl_symm_busbw"] = total / row.nccl_symm_us / 1000.0 * bf;
    row.extra["ratio_vs_best_nccl"] = row.symmem_us / std::min(row.nccl_us, row.nccl_symm_us);
    row.extra["count"] = double(count);
    // Check what the chosen path wrote (outputs poisoned first).
    if (o.check) {
      SYMMEM_CUDA_CHECK(cudaMemsetAsync(sout.ptr(), 0xFF, out_elems * es, h.stream()));
      SYMMEM_CUDA_CHECK(cudaMemsetAsync(wrong_dev, 0, sizeof(*wrong_dev), h.stream()));
      h.ctx().synchronize(h.stream());
      h.team().barrier("bench check");
      if (chosen == Algo::kNccl) run_nccl(sin.ptr(), sout.ptr(), h.stream());
      else run_symmem(chosen, h.stream());
      Expect e{op, redop, n, me, root, count};
      dispatch_type(d, [&](auto D) { check_kernel<D.value><<<264, 512, 0, h.stream()>>>(sout.ptr(), out_elems, e, wrong_dev); });
      unsigned long long w = 0;
      SYMMEM_CUDA_CHECK(cudaMemcpyAsync(&w, wrong_dev, sizeof(w), cudaMemcpyDeviceToHost, h.stream()));
      h.ctx().synchronize(h.stream(), "bench check");
      row.wrong = h.sum_over_ranks(static_cast<long>(w));
    }
    h.add(row);
    if (table && best_algo != Algo::kNccl) {
      // NCCL where it is faster and can do the operation (it has no all-to-all-v with GPU counts).
      // symmem calls NCCL on the caller's buffers, without registered windows: compare with the
      // plain figure.
      const double nccl_best = row.nccl_us;
      const bool nccl_can = detail::algo_unfit(op, Algo::kNccl, true, true, false, 0, 0, n).empty();
      table->add({op, -1, n, total, best < nccl_best || !nccl_can ? best_algo : Algo::kNccl});
    }
    if (me == 0) {
      std::printf("%12zu %11zu %6s | %9s %9.2f %8.1f %6ld | %9.2f %8.1f | %9.2f %8.1f | %6.2f", total, count,
                  reducing ? redop_name(redop) : "-", row.algo.c_str(), row.symmem_us, row.symmem_gbps, row.wrong, row.nccl_us,
                  row.extra["nccl_plain_busbw"], row.nccl_symm_us, row.extra["nccl_symm_busbw"], row.extra["ratio_vs_best_nccl"]);
      for (Algo a : cands) std::printf("  %s=%.2f", algo_name(a), row.extra[std::string(algo_name(a)) + "_us"]);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  // The largest size measured stands for every size above it.
  if (table && !table->entries().empty() && table->entries().back().op == op) table->extend_last(size_t(1) << 40);
  ncclCommWindowDeregister(nc, wi);
  ncclCommWindowDeregister(nc, wo);
  ncclMemFree(win_in);
  ncclMemFree(win_out);
  cudaFree(pin);
  cudaFree(pout);
  cudaFree(wrong_dev);
  c.free(sin);
  c.free(sout);
  c.free(counts);
}

}  // namespace symmem::bench
