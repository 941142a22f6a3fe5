// The last step of the overlapped GEMM + reduce-scatter: C_shard = scale * sum of the N landing
// slots (one per rank, rank order, fp32).
#include <cuda_bf16.h>

#include "overlap_kernels.hpp"
#include "symmem/error.hpp"

namespace symmem::overlap {
namespace {

constexpr int kBatch = 8;  // slots whose 16 bytes a thread loads before it adds any (loads in flight)

__global__ void sum_slots_kernel(const __nv_bfloat16* slots, size_t elems, int n, __nv_bfloat16* out, float scale) {
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
        const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v[b]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float2 f = __bfloat1622float2(h[j]);
          acc[2 * j] += f.x;
          acc[2 * j + 1] += f.y;
        }
      }
    }
    int4 o;
    __nv_bfloat162* p = reinterpret_cast<__nv_bfloat162*>(&o);
#pragma unroll
    for (int j = 0; j < 4; ++j) p[j] = __floats2bfloat162_rn(acc[2 * j] * scale, acc[2 * j + 1] * scale);
    reinterpret_cast<int4*>(out)[i] = o;
  }
  for (size_t i = vecs * 8 + static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < elems; i += stride) {
    float acc = 0;
    for (int r = 0; r < n; ++r) acc += __bfloat162float(slots[static_cast<size_t>(r) * elems + i]);
    out[i] = __float2bfloat16_rn(acc * scale);
  }
}

}  // namespace

void launch_sum_slots(const void* slots, size_t elems, int n, void* out, float scale, int sms, cudaStream_t s) {
  const size_t work = (elems + 7) / 8;
  const int blocks = static_cast<int>(std::min<size_t>((work + 255) / 256, static_cast<size_t>(sms) * 4));
  sum_slots_kernel<<<blocks > 0 ? blocks : 1, 256, 0, s>>>(static_cast<const __nv_bfloat16*>(slots), elems, n,
                                                           static_cast<__nv_bfloat16*>(out), scale);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::overlap
