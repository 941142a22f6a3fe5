// Zero-copy reduce-scatter over a symmetric input: rank r reduces chunk r of every rank's input
// into its own output. Barriers as in all_reduce.cu's one_shot (both relaxed: before the last one
// the block only loads peers' inputs and writes its own output).
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

template <DataType D, ReduceOp R>
__global__ void __launch_bounds__(kThreads) reduce_scatter_kernel(DirectArgs a) {
  pdl_wait();
  if (!device::barrier_block(a.ws, blockIdx.x, device::Arrival::kRelaxed)) return;
  const size_t idx = device::grid_index(), stride = device::grid_size();
  const size_t esize = sizeof(typename device::Elem<D>::Raw), count = a.bytes / esize;
  const char* src = a.in + static_cast<size_t>(a.in_h.rank) * a.bytes;
  char* dsts[1] = {a.out};
  size_t done = 0;
  if (((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(a.out)) & 15u) == 0) {
    const size_t words = a.bytes / 16;
    constexpr int U = kUnroll<D>;
    for (size_t w = idx; w < words; w += U * stride) {
      int4 res[U];
      reduce_words<D, R, U>(a.in_h, src, w, stride, words, res);
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (w + u * stride < words) reinterpret_cast<int4*>(a.out)[w + u * stride] = res[u];
    }
    done = words * 16 / esize;
  }
  reduce_elements<D, R>(a.in_h, src, dsts, 1, done, count, idx, stride);
  device::barrier_block(a.ws, blockIdx.x, device::Arrival::kRelaxed);
}

}  // namespace

void launch_reduce_scatter(const DirectArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s) {
  dispatch_reduce(d, r, [&](auto D, auto R) { launch(reduce_scatter_kernel<D.value, R.value>, blocks, kThreads, s, a); });
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
