// symmem's device API in your own kernel: each rank writes a block of data into the next rank's
// symmetric buffer and raises a signal; the next rank waits for it (bounded) and checks the data.
//   ./build/symmem-run -n 2 ./build/examples/ring
// Exits 77 with a message where there is no GPU.
#include <cstdio>
#include <vector>

#include <symmem/device.cuh>
#include <symmem/symmem.hpp>

namespace {

constexpr int kSlot = 0;  // a user signal slot (0 .. pad::kUserSlots - 1)

__global__ void ring_step(symmem::DeviceHandle h, const int* src, size_t count, int round, int* bad) {
  const int next = (h.rank + 1) % h.nranks, prev = (h.rank + h.nranks - 1) % h.nranks;
  int* dst = static_cast<int*>(h.local);  // the same offset on every rank: a symmetric address
  // Data, then the signal: whoever sees the signal sees the data.
  symmem::device::put_signal<symmem::device::BlockScope>(h, next, dst, src, count * sizeof(int), kSlot, round);
  __shared__ bool arrived;
  if (threadIdx.x == 0) arrived = symmem::device::wait_signal(h, kSlot, symmem::Cmp::kGe, round, prev);
  __syncthreads();
  if (!arrived) return;  // timed out: the host's synchronize() raises symmem::Timeout
  for (size_t i = threadIdx.x; i < count; i += blockDim.x)
    if (dst[i] != prev * 1000 + round) atomicAdd(bad, 1);
}

}  // namespace

int main() {
  try {
    auto ctx = symmem::Context::init();
    symmem::Heap heap(ctx);
    const int me = heap.team().rank();
    const size_t count = 4096;
    symmem::SymmetricBuffer buf = heap.alloc(count * sizeof(int));
    int *src = nullptr, *bad = nullptr;
    SYMMEM_CUDA_CHECK(cudaMalloc(&src, count * sizeof(int)));
    SYMMEM_CUDA_CHECK(cudaMalloc(&bad, sizeof(int)));
    SYMMEM_CUDA_CHECK(cudaMemset(bad, 0, sizeof(int)));
    for (int round = 1; round <= 3; ++round) {
      std::vector<int> host(count, me * 1000 + round);
      SYMMEM_CUDA_CHECK(cudaMemcpy(src, host.data(), count * sizeof(int), cudaMemcpyHostToDevice));
      ring_step<<<1, 256>>>(buf.handle(), src, count, round, bad);
      ctx->synchronize(nullptr, "ring step");
      symmem::stream::barrier(buf, nullptr);  // nobody overwrites a buffer its reader still checks
      ctx->synchronize(nullptr, "ring barrier");
    }
    int wrong = 0;
    SYMMEM_CUDA_CHECK(cudaMemcpy(&wrong, bad, sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("rank %d: %s\n", me, wrong == 0 ? "ring ok" : "ring WRONG");
    cudaFree(src);
    cudaFree(bad);
    heap.free(buf);
    return wrong == 0 ? 0 : 1;
  } catch (const symmem::Unsupported& e) {
    std::printf("ring example skipped: %s\n", e.what());
    return 77;
  } catch (const symmem::Error& e) {
    std::fprintf(stderr, "ring example failed: %s\n", e.what());
    return 1;
  }
}
