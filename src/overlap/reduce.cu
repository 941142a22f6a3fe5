// The last step of the overlapped GEMM + reduce-scatter: C_shard = scale * sum of the N landing
// slots (one per rank, rank order, fp32), bf16 or fp16.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "overlap_kernels.hpp"
#include "symmem/error.hpp"

namespace symmem::overlap {
namespace {

constexpr int kBatch = 8;  // slots whose 16 bytes a thread loads before it adds any (loads in flight)

// Pairs of T to and from float2.
template <class T> struct Half2;
template <> struct Half2<__nv_bfloat16> {
  using T2 = __nv_bfloat162;
  static __device__ float2 to(T2 h) { return __bfloat1622float2(h); }
  static __device__ T2 from(float a, float b) { return __floats2bfloat162_rn(a, b); }
  static __device__ float one(__nv_bfloat16 h) { return __bfloat162float(h); }
  static __device__ __nv_bfloat16 round(float a) { return __float2bfloat16_rn(a); }
};
template <> struct Half2<__half> {
  using T2 = __half2;
  static __device__ float2 to(T2 h) { return __half22float2(h); }
  static __device__ T2 from(float a, float b) { return __floats2half2_rn(a, b); }
  static __device__ float one(__half h) { return __half2float(h); }
  static __device__ __half round(float a) { return __float2half_rn(a); }
};

template <class T>
__global__ void sum_slots_kernel(const T* slots, size_t elems, int n, T* out, float scale) {
  using H = Half2<T>;
  using T2 = typename H::T2;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t vecs = elems / 8;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int r0 = 0; r0 < n; r0 += kBatch) {
      int4 v[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (r0 + b < n) v[b] = reinterpret_cast<const int4*>(slots + static_cast<size_t>(r0 + b) * elems)[i];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (r0 + b >= n) break;
        const T2* h = reinterpret_cast<const T2*>(&v[b]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float2 f = H::to(h[j]);
          acc[2 * j] += f.x;
          acc[2 * j + 1] += f.y;
        }
      }
    }
    int4 o;
    T2* p = reinterpret_cast<T2*>(&o);
#pragma unroll
    for (int j = 0; j < 4; ++j) p[j] = H::from(acc[2 * j] * scale, acc[2 * j + 1] * scale);
    reinterpret_cast<int4*>(out)[i] = o;
  }
  for (size_t i = vecs * 8 + static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < elems; i += stride) {
    float acc = 0;
    for (int r = 0; r < n; ++r) acc += H::one(slots[static_cast<size_t>(r) * elems + i]);
    out[i] = H::round(acc * scale);
  }
}

}  // namespace

void launch_sum_slots(const void* slots, size_t elems, int n, void* out, float scale, int sms, cudaStream_t s, DataType dtype) {
  require(dtype == DataType::kBFloat16 || dtype == DataType::kFloat16, "overlap sum: dtype ", dtype_name(dtype), " is not bf16 or fp16");
  const size_t work = (elems + 7) / 8;
  const int blocks = std::max(1, static_cast<int>(std::min<size_t>((work + 255) / 256, static_cast<size_t>(sms) * 4)));
  if (dtype == DataType::kFloat16)
    sum_slots_kernel<<<blocks, 256, 0, s>>>(static_cast<const __half*>(slots), elems, n, static_cast<__half*>(out), scale);
  else
    sum_slots_kernel<<<blocks, 256, 0, s>>>(static_cast<const __nv_bfloat16*>(slots), elems, n, static_cast<__nv_bfloat16*>(out), scale);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::overlap
