#pragma once
// Host references for the collective tests: conversions that match the device's, random elements,
// the reduction in rank order (fp32, as the device does, for the narrow floating types; exact for
// integers, in the device's accumulator and its wrapping; fp64 for float64), and tolerances per dtype.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "gpu_env.hpp"

namespace symmem::test {

// Host conversions, matching the device's.
inline float to_float(DataType d, const uint8_t* p) {
  switch (d) {
    case DataType::kFloat32: { float f; std::memcpy(&f, p, 4); return f; }
    case DataType::kFloat16: { __half_raw r; std::memcpy(&r.x, p, 2); return __half2float(__half(r)); }
    case DataType::kBFloat16: { uint32_t u = uint32_t(p[0] | (p[1] << 8)) << 16; float f; std::memcpy(&f, &u, 4); return f; }
    case DataType::kFp8E4M3: { __nv_fp8_e4m3 v; v.__x = p[0]; return float(v); }
    case DataType::kFp8E5M2: { __nv_fp8_e5m2 v; v.__x = p[0]; return float(v); }
    case DataType::kInt32: { int32_t i; std::memcpy(&i, p, 4); return float(i); }
    default: return p[0];
  }
}
inline void from_float(DataType d, float f, uint8_t* p) {
  switch (d) {
    case DataType::kFloat32: std::memcpy(p, &f, 4); break;
    case DataType::kFloat16: { __half h = __float2half_rn(f); std::memcpy(p, &h, 2); break; }
    case DataType::kBFloat16: { __nv_bfloat16 b = __float2bfloat16_rn(f); std::memcpy(p, &b, 2); break; }
    case DataType::kFp8E4M3: { __nv_fp8_e4m3 v(f); p[0] = v.__x; break; }
    case DataType::kFp8E5M2: { __nv_fp8_e5m2 v(f); p[0] = v.__x; break; }
    case DataType::kInt32: { int32_t i = static_cast<int32_t>(f); std::memcpy(p, &i, 4); break; }
    default: p[0] = static_cast<uint8_t>(f);
  }
}
/// Types whose reference is exact (reduce_exact below): the integers, and float64 (fp64 in rank order).
inline bool exact_type(DataType d) {
  return d == DataType::kInt32 || d == DataType::kUInt8 || d == DataType::kInt8 || d == DataType::kUInt32 || d == DataType::kInt64 ||
         d == DataType::kUInt64 || d == DataType::kFloat64;
}
/// Every element type and reduction the collectives take.
inline constexpr DataType kReduceTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kFp8E4M3,
                                            DataType::kFp8E5M2, DataType::kInt32,   DataType::kUInt8,    DataType::kInt8,
                                            DataType::kUInt32,  DataType::kInt64,   DataType::kUInt64,   DataType::kFloat64};
inline constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd, ReduceOp::kAvg};
/// Whether a test runs NCCL beside symmem for (d, op): where NCCL has the pair, for integers every
/// op (symmem defines their results as NCCL's: an average divides the sum wrapped in the type).
inline bool nccl_beside(DataType d, ReduceOp op) {
  return (op == ReduceOp::kSum || (exact_type(d) && d != DataType::kFloat64)) && d != DataType::kFp8E5M2;
}
/// Element counts of the data-movement tests: 1, tails, and one past the LL capacity (1 MiB a peer).
inline std::vector<size_t> movement_counts(DataType d) {
  return {1, 5, 1000, 65537, (size_t(3) << 20) / dtype_size(d) + 1};
}
/// Random elements of dtype d: integers of every bit pattern (their sums and products wrap, as the
/// device's), float64 in [-1, 1), the narrower floating types as below.
inline std::vector<uint8_t> random_elems(DataType d, size_t count, uint64_t seed, ReduceOp op) {
  std::mt19937_64 g(seed * 7919 + 17);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<uint8_t> v(count * dtype_size(d));
  if (d == DataType::kFloat64) {
    std::uniform_real_distribution<double> ud(-1.0, 1.0);
    for (size_t i = 0; i < count; ++i) {
      const double x = ud(g);
      std::memcpy(v.data() + i * 8, &x, 8);
    }
    return v;
  }
  if (exact_type(d)) {
    for (size_t i = 0; i < v.size(); i += 8) {
      const uint64_t bits = g();
      std::memcpy(v.data() + i, &bits, std::min<size_t>(8, v.size() - i));
    }
    return v;
  }
  for (size_t i = 0; i < count; ++i) {
    (void)op;
    float f = u(g);
    if (d == DataType::kFp8E4M3 || d == DataType::kFp8E5M2) f *= 4;
    from_float(d, f, v.data() + i * dtype_size(d));
  }
  return v;
}
inline float combine(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
    case ReduceOp::kProd: return a * b;
    default: return a + b;
  }
}
/// Reference of element i over ranks' inputs (fp32, rank order, as the device does; the
/// floating types narrower than float64: the others are exact_type).
inline float reference(DataType d, ReduceOp op, const std::vector<std::vector<uint8_t>>& ins, size_t elem, int n) {
  const size_t es = dtype_size(d);
  float acc = to_float(d, ins[0].data() + elem * es);
  for (int r = 1; r < n; ++r) acc = combine(op, acc, to_float(d, ins[r].data() + elem * es));
  if (op == ReduceOp::kAvg) acc /= n;
  uint8_t tmp[4];
  from_float(d, acc, tmp);  // rounded to the output type
  return to_float(d, tmp);
}
/// Rounding allowed: one rounding to the output type, for symmem (fp32 accumulation). NCCL rounds
/// to the type at every ring step: pass steps = nranks - 1 for it.
inline double tolerance(DataType d, float ref, int steps = 1) {
  const double k = steps < 1 ? 1 : steps;
  switch (d) {
    case DataType::kFloat32: return k * 1e-5 * std::max(1.f, std::fabs(ref));
    case DataType::kFloat16: return k * 2e-3 * std::max(1.f, std::fabs(ref));
    case DataType::kBFloat16: return k * 1.6e-2 * std::max(1.f, std::fabs(ref));
    case DataType::kFp8E4M3: return k * 0.13 * std::max(1.f, std::fabs(ref));
    case DataType::kFp8E5M2: return k * 0.26 * std::max(1.f, std::fabs(ref));
    default: return 0;
  }
}
/// Element `elem` reduced over the ranks' inputs as the device reduces it: loaded as Val, widened
/// to Acc, folded in rank order (integer sums and products wrap in Acc's width, the type's own),
/// avg divided by n, stored back as Raw.
template <class Raw, class Acc, class Val = Acc>
Raw reduce_exact(ReduceOp op, const std::vector<std::vector<uint8_t>>& ins, size_t elem, int n) {
  auto at = [&](int r) {
    Raw raw;
    std::memcpy(&raw, ins[r].data() + elem * sizeof(Raw), sizeof(Raw));
    return static_cast<Acc>(static_cast<Val>(raw));
  };
  Acc a = at(0);
  for (int r = 1; r < n; ++r) {
    const Acc b = at(r);
    if (op == ReduceOp::kMax) a = std::max(a, b);
    else if (op == ReduceOp::kMin) a = std::min(a, b);
    else if constexpr (std::is_integral_v<Acc>) {
      using U = std::make_unsigned_t<Acc>;
      a = static_cast<Acc>(op == ReduceOp::kProd ? static_cast<U>(static_cast<U>(a) * static_cast<U>(b)) : static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      a = op == ReduceOp::kProd ? a * b : a + b;
    }
  }
  if (op == ReduceOp::kAvg) a = a / static_cast<Acc>(n);
  return static_cast<Raw>(a);
}
/// check_reduced for exact_type(d): integers bit for bit; float64 within 1e-12 of the sum of the
/// inputs' magnitudes a step (NCCL sums in another order).
template <class Raw, class Acc, class Val = Acc>
long check_exact(ReduceOp op, const std::vector<std::vector<uint8_t>>& ins, size_t first_elem, const std::vector<uint8_t>& got,
                 size_t count, int n, std::string* first_bad, int steps) {
  long bad = 0;
  for (size_t i = 0; i < count; ++i) {
    const Raw want = reduce_exact<Raw, Acc, Val>(op, ins, first_elem + i, n);
    Raw have;
    std::memcpy(&have, got.data() + i * sizeof(Raw), sizeof(Raw));
    bool ok = have == want;
    if constexpr (std::is_floating_point_v<Acc>) {
      Acc scale = 0;
      for (int r = 0; r < n; ++r) {
        Raw x;
        std::memcpy(&x, ins[r].data() + (first_elem + i) * sizeof(Raw), sizeof(Raw));
        scale += std::fabs(static_cast<Acc>(static_cast<Val>(x)));
      }
      ok = std::fabs(static_cast<double>(have) - static_cast<double>(want)) <= 1e-12 * std::max(1, steps) * std::max<double>(1.0, scale);
    }
    if (!ok && bad++ == 0) {
      std::ostringstream os;
      os << "element " << i << ": got " << +have << ", want " << +want;
      *first_bad = os.str();
    }
  }
  return bad;
}
/// Counts elements of `got` that miss the reference; reports the first. With steps > 1 (NCCL,
/// which rounds to the type at every ring step) each step may round a partial sum, which is
/// bounded by the sum of the magnitudes of the inputs: the tolerance scales with that.
inline long check_reduced(DataType d, ReduceOp op, const std::vector<std::vector<uint8_t>>& ins, size_t first_elem,
                          const std::vector<uint8_t>& got, size_t count, int n, std::string* first_bad, int steps = 1) {
  switch (d) {
    case DataType::kInt32: return check_exact<uint32_t, int32_t>(op, ins, first_elem, got, count, n, first_bad, steps);
    case DataType::kUInt32: return check_exact<uint32_t, uint32_t>(op, ins, first_elem, got, count, n, first_bad, steps);
    case DataType::kInt64: return check_exact<uint64_t, int64_t>(op, ins, first_elem, got, count, n, first_bad, steps);
    case DataType::kUInt64: return check_exact<uint64_t, uint64_t>(op, ins, first_elem, got, count, n, first_bad, steps);
    case DataType::kInt8: return check_exact<uint8_t, int8_t>(op, ins, first_elem, got, count, n, first_bad, steps);
    case DataType::kUInt8: return check_exact<uint8_t, uint8_t>(op, ins, first_elem, got, count, n, first_bad, steps);
    case DataType::kFloat64: return check_exact<double, double>(op, ins, first_elem, got, count, n, first_bad, steps);
    default: break;
  }
  long bad = 0;
  const size_t es = dtype_size(d);
  for (size_t i = 0; i < count; ++i) {
    float ref = reference(d, op, ins, first_elem + i, n);
    float scale = ref;
    if (steps > 1) {
      scale = 0;
      for (int r = 0; r < n; ++r) scale += std::fabs(to_float(d, ins[r].data() + (first_elem + i) * es));
    }
    float g = to_float(d, got.data() + i * es);
    if (!(std::fabs(g - ref) <= tolerance(d, scale, steps))) {  // NaN (poison) fails too
      if (bad++ == 0) *first_bad = "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(ref);
    }
  }
  return bad;
}

/// Runs f(first, last) over [0, rows) split among threads: this rank's share of the host's cores
/// (`ranks` ranks compute their references at once). Large GEMM references take tens of seconds on
/// one core (4 x H100 hosts, session 34: the overlap suite outran a 60 s limit with its GPUs idle).
template <class F>
void parallel_rows(int64_t rows, int ranks, F f) {
  const int64_t cores = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()) / std::max(1, ranks));
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>({cores, 16, rows}));
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < parts; ++t) threads.emplace_back(f, rows * t / parts, rows * (t + 1) / parts);
  f(int64_t{0}, rows / parts);
  for (std::thread& th : threads) th.join();
}
// The fp64 reference of every GEMM test: ref[i, j] += scale x sum_kk a[i, kk] b[kk, j] and
// mag[i, j] += scale x sum_kk |a[i, kk] b[kk, j]| (the bound a rounding error scales with), for A
// m x k and B k x n, row-major, into m x n; summed in kk order, over this host's cores shared by
// `ranks` processes.
inline void gemm_reference(const float* a, const float* b, int64_t m, int64_t k, int64_t n, int ranks, double* ref, double* mag,
                           double scale = 1.0) {
  parallel_rows(m, ranks, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t kk = 0; kk < k; ++kk) {
        const double av = a[i * k + kk];
        for (int64_t j = 0; j < n; ++j) {
          const double t = av * b[kk * n + j];
          ref[i * n + j] += t * scale;
          mag[i * n + j] += std::fabs(t) * scale;
        }
      }
  });
}
// "" where `got` holds chunk `part` of every rank's input (bytes [part * chunk, (part + 1) * chunk)
// of ins[r]) at r * chunk, in rank order: all-gather and gather (part 0), all-to-all (part = this
// rank); else the first rank whose chunk is wrong.
inline std::string rank_order_mismatch(const std::vector<std::vector<uint8_t>>& ins, size_t chunk, const std::vector<uint8_t>& got,
                                       size_t part = 0) {
  for (size_t r = 0; r < ins.size(); ++r)
    if (!std::equal(ins[r].begin() + part * chunk, ins[r].begin() + (part + 1) * chunk, got.begin() + r * chunk))
      return "wrong data from rank " + std::to_string(r);
  return "";
}

// The int32 sum all-reduce that the MoE and overlap tests run between their own calls (another
// operation on the same communicator): kSideCount elements, rank r's element i below; exact.
constexpr int kSideCount = 4096;
inline int32_t side_element(int rank, int i) { return (i * 131 + rank * 17) % 1000 - 500; }
/// Uploads this rank's input of the side all-reduce to `in` (kSideCount int32 of device memory).
inline void upload_side_input(void* in, int rank) {
  std::vector<int32_t> v(kSideCount);
  for (int i = 0; i < kSideCount; ++i) v[i] = side_element(rank, i);
  SYMMEM_CUDA_CHECK(cudaMemcpy(in, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
}
/// "" where `out` (device memory) holds the side all-reduce's sum over n ranks; else the first
/// wrong element.
inline std::string side_sum_mismatch(const void* out, int n) {
  std::vector<int32_t> got(kSideCount);
  SYMMEM_CUDA_CHECK(cudaMemcpy(got.data(), out, got.size() * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kSideCount; ++i) {
    int32_t want = 0;
    for (int r = 0; r < n; ++r) want += side_element(r, i);
    if (got[i] != want) return "element " + std::to_string(i) + " = " + std::to_string(got[i]) + ", want " + std::to_string(want);
  }
  return "";
}

// NaN for every float type, complete before the call returns: cudaMemset runs on the legacy
// default stream and may finish after it returns, and work on a non-blocking stream does not wait
// for it (session 75: Overlap.TransposedGemmDynamicScheduleOnOneGpu's poison of C landed after
// the GEMM's first tiles in 5 of 25 runs where 2 ranks shared the GPU: "got -nan").
inline void poison(void* p, size_t bytes) {
  SYMMEM_CUDA_CHECK(cudaMemset(p, 0xFF, bytes));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace symmem::test
