#pragma once
// Bulk copies through the Hopper tensor-memory-accelerator (cp.async.bulk): global -> shared ->
// global (peer memory included), one issuing thread per block, a ring of shared-memory stages
// completed on mbarriers. Moves large messages with fewer instructions than SM loads/stores.
#include <cstddef>
#include <cstdint>

#include "symmem/export.hpp"

namespace symmem::device {
/// The shared-memory stages of a bulk copy (a launch sizes its dynamic shared memory by them, so
/// host code sees them in every compilation pass, whatever architecture the pass is for).
constexpr int kBulkStages = 4;
}  // namespace symmem::device

// The bulk-copy unit exists from sm_90 (Hopper) on; SYMMEM_HAS_BULK_COPY tells device code.
#if defined(SYMMEM_DEVICE_COMPILE) && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
#define SYMMEM_HAS_BULK_COPY 1
namespace symmem::device {

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
/// Makes the mbarrier initialisation visible to the async proxy (the bulk-copy unit).
__device__ __forceinline__ void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
/// Whose accesses a completed mbarrier phase orders for the waiter: this CTA's (the default of
/// try_wait, enough for bulk loads' bytes and arrivals from this CTA) or the cluster's (a phase
/// completed by an arrival with release at cluster scope from another CTA of the cluster).
enum class MbarScope { kCta, kCluster };
/// Waits for the phase with this parity to complete (the bytes of a bulk load have landed), with
/// acquire at `kScope`.
template <MbarScope kScope = MbarScope::kCta>
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    if constexpr (kScope == MbarScope::kCluster)
      asm volatile(
          "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(smem_addr(bar)), "r"(parity)
          : "memory");
    else
      asm volatile(
          "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(smem_addr(bar)), "r"(parity)
          : "memory");
  }
}
/// Global -> shared, completing `bytes` on `bar`. 16-byte aligned, size a multiple of 16.
__device__ __forceinline__ void bulk_load(void* smem, const void* gmem, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(smem)),
               "l"(gmem), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}
/// Shared -> global (any mapped global memory, a peer's included).
__device__ __forceinline__ void bulk_store(void* gmem, const void* smem, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem), "r"(smem_addr(smem)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
/// Waits until at most N committed bulk stores still read shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory"); }
/// Waits until every committed bulk store has completed (its writes performed).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

/// Copies chunks c = first, first + step, ... of [0, n) (n a multiple of 16, both pointers 16-byte
/// aligned) through kBulkStages shared-memory stages of `chunk` bytes at `smem`. Called by one
/// thread; `bars` are kBulkStages mbarriers in shared memory.
__device__ inline void bulk_copy_chunks(char* dst, const char* src, size_t n, size_t chunk, size_t first, size_t step,
                                        char* smem, uint64_t* bars) {
  for (int s = 0; s < kBulkStages; ++s) mbar_init(&bars[s], 1);
  fence_mbar_init();
  const size_t nchunks = (n + chunk - 1) / chunk;
  const size_t count = nchunks > first ? (nchunks - first + step - 1) / step : 0;
  auto load = [&](size_t k) {
    const size_t off = (first + k * step) * chunk;
    const uint32_t bytes = static_cast<uint32_t>(n - off < chunk ? n - off : chunk);
    uint64_t* bar = &bars[k % kBulkStages];
    mbar_expect_tx(bar, bytes);
    bulk_load(smem + (k % kBulkStages) * chunk, src + off, bytes, bar);
  };
  for (size_t k = 0; k < count && k < static_cast<size_t>(kBulkStages); ++k) load(k);
  for (size_t k = 0; k < count; ++k) {
    const size_t off = (first + k * step) * chunk;
    const uint32_t bytes = static_cast<uint32_t>(n - off < chunk ? n - off : chunk);
    mbar_wait(&bars[k % kBulkStages], static_cast<uint32_t>((k / kBulkStages) & 1));
    bulk_store(dst + off, smem + (k % kBulkStages) * chunk, bytes);
    // Refill the stage of the previous store once it has read shared memory; the store just
    // issued may still be reading its own stage.
    if (k >= 1 && k - 1 + kBulkStages < count) {
      bulk_wait_read<1>();
      load(k - 1 + kBulkStages);
    }
  }
  bulk_wait_all();
}

}  // namespace symmem::device
#endif
