// The last step of the overlapped GEMM + reduce-scatter: C_shard = scale * sum of the N landing
// slots (one per rank, rank order, fp32), bf16 or fp16; and the end of a recv call (credits.cuh).
#include "credits.cuh"
#include "overlap_kernels.hpp"
#include "symmem/device/reduce.cuh"
#include "symmem/error.hpp"

namespace symmem::overlap {
namespace {

constexpr int kBatch = 8;  // slots whose 16 bytes a thread loads before it adds any (loads in flight)

// 16-byte words of 8 elements, summed in fp32 through the collectives' element conversions
// (device/reduce.cuh), so bf16 and fp16 are one kernel.
template <DataType D>
__global__ void sum_slots_kernel(const uint16_t* slots, size_t elems, int n, uint16_t* out, float scale) {
  using E = device::Elem<D>;
  using P = device::Pack<D, int4>;
  static_assert(P::kN == 8, "a 16-byte word holds 8 two-byte elements");
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t vecs = elems / 8;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    P acc;
#pragma unroll
    for (int j = 0; j < P::kN; ++j) acc.v[j] = 0.f;
    for (int r0 = 0; r0 < n; r0 += kBatch) {
      int4 v[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (r0 + b < n) v[b] = reinterpret_cast<const int4*>(slots + static_cast<size_t>(r0 + b) * elems)[i];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (r0 + b >= n) break;
        acc.template reduce<ReduceOp::kSum>(v[b]);
      }
    }
#pragma unroll
    for (int j = 0; j < P::kN; ++j) acc.v[j] *= scale;
    reinterpret_cast<int4*>(out)[i] = acc.template store<ReduceOp::kSum>(n);
  }
  for (size_t i = vecs * 8 + static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < elems; i += stride) {
    float acc = 0;
    for (int r = 0; r < n; ++r) acc += E::load(slots[static_cast<size_t>(r) * elems + i]);
    out[i] = E::store(acc * scale);
  }
}

__global__ void end_recv_call_kernel(DeviceHandle h, int clear) { end_recv_call(h, clear); }

}  // namespace

void launch_end_recv_call(const DeviceHandle& recv, int clear, cudaStream_t s) {
  end_recv_call_kernel<<<1, 1, 0, s>>>(recv, clear);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

void launch_sum_slots(const void* slots, size_t elems, int n, void* out, float scale, int sms, cudaStream_t s, DataType dtype) {
  require(dtype == DataType::kBFloat16 || dtype == DataType::kFloat16, "overlap sum: dtype ", dtype_name(dtype), " is not bf16 or fp16");
  const size_t work = (elems + 7) / 8;
  const int blocks = std::max(1, static_cast<int>(std::min<size_t>((work + 255) / 256, static_cast<size_t>(sms) * 4)));
  auto* in = static_cast<const uint16_t*>(slots);
  auto* o = static_cast<uint16_t*>(out);
  if (dtype == DataType::kFloat16)
    sum_slots_kernel<DataType::kFloat16><<<blocks, 256, 0, s>>>(in, elems, n, o, scale);
  else
    sum_slots_kernel<DataType::kBFloat16><<<blocks, 256, 0, s>>>(in, elems, n, o, scale);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::overlap
