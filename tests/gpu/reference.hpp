#pragma once
// Host references for the collective tests: conversions that match the device's, random elements,
// the reduction in rank order (fp32, as the device does), and tolerances per dtype.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <thread>
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
/// Random elements of dtype d (ints small enough that products stay exact).
inline std::vector<uint8_t> random_elems(DataType d, size_t count, uint64_t seed, ReduceOp op) {
  std::mt19937_64 g(seed * 7919 + 17);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<uint8_t> v(count * dtype_size(d));
  for (size_t i = 0; i < count; ++i) {
    float f = d == DataType::kInt32 ? float(int(g() % (op == ReduceOp::kProd ? 5 : 2001)) - (op == ReduceOp::kProd ? 2 : 1000)) : u(g);
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
/// Reference of element i over ranks' inputs (fp32, rank order, as the device does).
inline float reference(DataType d, ReduceOp op, const std::vector<std::vector<uint8_t>>& ins, size_t elem, int n) {
  const size_t es = dtype_size(d);
  float acc = to_float(d, ins[0].data() + elem * es);
  if (d == DataType::kInt32) {
    int32_t ia = static_cast<int32_t>(acc);
    for (int r = 1; r < n; ++r) {
      int32_t b = static_cast<int32_t>(to_float(d, ins[r].data() + elem * es));
      ia = op == ReduceOp::kMax ? std::max(ia, b) : op == ReduceOp::kMin ? std::min(ia, b)
         : op == ReduceOp::kProd ? static_cast<int32_t>(uint32_t(ia) * uint32_t(b)) : static_cast<int32_t>(uint32_t(ia) + uint32_t(b));
    }
    if (op == ReduceOp::kAvg) ia /= n;
    return static_cast<float>(ia);
  }
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
/// Counts elements of `got` that miss the reference; reports the first. With steps > 1 (NCCL,
/// which rounds to the type at every ring step) each step may round a partial sum, which is
/// bounded by the sum of the magnitudes of the inputs: the tolerance scales with that.
inline long check_reduced(DataType d, ReduceOp op, const std::vector<std::vector<uint8_t>>& ins, size_t first_elem,
                          const std::vector<uint8_t>& got, size_t count, int n, std::string* first_bad, int steps = 1) {
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
// NaN for every float type, complete before the call returns: cudaMemset runs on the legacy
// default stream and may finish after it returns, and work on a non-blocking stream does not wait
// for it (session 75: Overlap.TransposedGemmDynamicScheduleOnOneGpu's poison of C landed after
// the GEMM's first tiles in 5 of 25 runs where 2 ranks shared the GPU: "got -nan").
inline void poison(void* p, size_t bytes) {
  SYMMEM_CUDA_CHECK(cudaMemset(p, 0xFF, bytes));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace symmem::test
