#pragma once
// The PTX the own GEMM's kernels share (hopper_gemm.cu, hopper_gemm_t.cu): mbarrier arrivals,
// TMA loads and stores, stmatrix / ldmatrix, cluster ids, wgmma's shared-memory descriptors and
// group control; and on the host, the TMA descriptor of a row-major bf16 matrix and a cluster
// launch. Device code only where the compiler targets sm_90a (SYMMEM_HGEMM_DEVICE).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "credits.cuh"
#include "hopper_gemm.hpp"
#include "runtime/driver.hpp"
#include "symmem/device.cuh"
#include "symmem/device/bulk.cuh"
#include "symmem/error.hpp"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SYMMEM_HGEMM_DEVICE 1
#endif

namespace symmem::overlap {
/// A bounded wait of the own GEMMs for this rank's signal `slot` to reach `value` (acquire), as
/// HopperRowShards::quiet_ns says; `peer` names who is expected.
__device__ __forceinline__ bool hopper_wait_signal(const HopperRowShards& s, int slot, uint64_t value, int peer) {
  if (s.quiet_ns == 0) return device::wait_signal(s.handle, slot, Cmp::kGe, value, peer);
  return device::wait_until_quiet(s.handle, s.handle.local_signals + slot, Cmp::kGe, value, WaitKind::kSignal, peer, s.quiet_ns);
}
}  // namespace symmem::overlap

namespace symmem::overlap::ptx {

#ifdef SYMMEM_HGEMM_DEVICE
using device::mbar_expect_tx;
using device::mbar_init;
using device::mbar_wait;
using device::smem_addr;

// Arrives on the barrier at b's offset in CTA `cta` of this cluster (this CTA's own included).
// Release at CTA scope, as the local arrive: what it orders is the wgmma's reads of the stage,
// which wgmma.wait_group has already retired. (.release.cluster made the whole GEMM 2.1x slower
// on H100: it waits for the epilogue's global stores.)
__device__ __forceinline__ void bar_arrive_cluster(uint64_t* b, uint32_t cta) {
  asm volatile(
      "{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(
          smem_addr(b)),
      "r"(cta)
      : "memory");
}
// The dynamic schedule's handoff between a cluster's CTAs (hopper_gemm_t.cu): a word stored into
// CTA `cta`'s shared memory at b's offset, an arrival there with release at cluster scope (which
// orders this thread's accesses before it for whoever acquires the phase), and the wait that
// acquires a phase at cluster scope (device::mbar_wait<MbarScope::kCluster>).
__device__ __forceinline__ void st_cluster_u32(uint32_t* w, uint32_t cta, uint32_t v) {
  asm volatile("{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n st.shared::cluster.u32 [ra], %2;\n}\n" ::"r"(smem_addr(w)), "r"(cta), "r"(v)
               : "memory");
}
__device__ __forceinline__ void bar_arrive_cluster_release(uint64_t* b, uint32_t cta) {
  asm volatile(
      "{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}\n" ::"r"(
          smem_addr(b)),
      "r"(cta)
      : "memory");
}
// A word of this CTA's shared memory read or written as such (through a generic pointer, a volatile
// access compiles to LD.E.STRONG.SYS: the dynamic schedule's consumers spent 31% of their stall
// samples on one, session 68).
__device__ __forceinline__ uint32_t lds_u32(const uint32_t* w) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(smem_addr(w)) : "memory");
  return v;
}
__device__ __forceinline__ void sts_u32(uint32_t* w, uint32_t v) { asm volatile("st.shared.u32 [%0], %1;" ::"r"(smem_addr(w)), "r"(v) : "memory"); }
__device__ __forceinline__ void bar_arrive(uint64_t* b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(b)) : "memory");
}
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void tma_load_multicast(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], "
      "%5;" ::"r"(smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void tma_store(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map), "r"(c0), "r"(c1),
               "r"(smem_addr(src))
               : "memory");
}
// The same for a tensor of rank 3 (tensor_map_3d; c2: the matrix).
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
          smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void tma_load_multicast_3d(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], "
      "[%5], %6;" ::"r"(smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar)), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];" ::"l"(map), "r"(c0), "r"(c1), "r"(c2),
               "r"(smem_addr(src))
               : "memory");
}
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
}
__device__ __forceinline__ void named_sync(int id, int threads) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory"); }
__device__ __forceinline__ void named_arrive(int id, int threads) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory"); }
__device__ __forceinline__ uint32_t pack_bf16(float a, float b) {
  const __nv_bfloat162 p = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&p);
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_id() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_count() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}

// This thread's warpgroup (threadIdx.x / 128), read through a shuffle from lane 0 so that the
// compiler knows it is the same in every lane of the warp: the kernels branch on it into their
// roles, and inside a branch on a value it cannot prove warp-uniform it keeps whatever the role
// computes (the consumers' wgmma descriptors, stages, phases) in per-thread registers, moving each
// descriptor into uniform registers before each wgmma.
__device__ __forceinline__ int warpgroup_index() { return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0); }

// A shared-memory matrix descriptor with the 128-byte swizzle (byte offsets, 16-byte units), in two
// words: the low one (start address, LBO) is what a k-loop steps through, the high one (SBO, the
// swizzle mode) a constant, so that a step is one 32-bit add (in uniform registers, where the
// compiler knows the warp agrees) and not a 64-bit add and a move. The steps stay inside the
// address field: shared addresses are below 2^18.
__device__ __forceinline__ uint32_t sw128_desc_lo(uint32_t addr, uint32_t lbo) { return ((addr & 0x3FFFF) >> 4) | ((lbo >> 4) << 16); }
__device__ __forceinline__ uint64_t sw128_desc_words(uint32_t lo, uint32_t sbo) { return (uint64_t((sbo >> 4) | (1u << 30)) << 32) | lo; }
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) { return sw128_desc_words(sw128_desc_lo(addr, lbo), sbo); }
__device__ __forceinline__ uint64_t sw128_desc_1024(uint32_t lo) { return sw128_desc_words(lo, 1024); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_keep(float (&d)[N]) {  // the accumulators stay in registers across the fence
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The kernels' dynamic shared memory from its first 1024-byte boundary (the 128-byte swizzle's
// TMA boxes and wgmma descriptors want 1024-byte aligned stages; both kernels ask for 1 KiB more).
__device__ __forceinline__ uint8_t* smem_aligned_1024(uint8_t* raw) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
}

// HopperRowShards::done: this thread's stores of its last tile are complete (the wait covers this
// thread's bulk groups, i.e. that tile's, issued by a consumer's leader), then word `at` is added to with release semantics
// at GPU scope, which orders those writes before it for whoever sees the count on this GPU: a
// stream wait, then the copy engine, both of which read this GPU's memory through its L2, where
// a GPU-scope release has made the writes visible. (A release at system scope made every copy
// that waited on the counts end 20-25 us later at 8B M 8192, TP = 4 (the probe: GEMM + pushes 399
// us against 372 at GPU scope, the GEMM alone counting 370-376 either way; 4 x H200, session 33);
// a full __threadfence_system() before a plain add stalled the warpgroup for every tile, session
// 32.)
__device__ __forceinline__ void count_stored(unsigned long long* done, int at) {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  device::fence_proxy_async_global();
  asm volatile("red.release.gpu.global.add.u64 [%0], 1;" ::"l"(done + at) : "memory");
}

// HopperRowShards::finished: called by thread 0 of every CTA at the kernel's end, after a barrier
// that every thread of the CTA reached once its stores and counts were done. The CTA counts itself
// (after a GPU-scope fence, which the barrier makes cumulative over its threads' counts); the
// grid's last CTA then sets each of the `words` done words to kHopperDoneAll (past every count's
// target) and zeroes the word for the next launch. Every tile is counted anyway (a bounded wait
// that expires leaves its tile computed on what is there, stored and counted), so in a correct run
// the words already hold their targets: this makes "no push waits past the GEMM's end" hold by
// construction, whatever a target says, at the cost of one add a CTA (the host's stream writes of
// each count after the GEMM, which it replaces, cost 2.7 us each: 44 us at 16 row groups, session 59).
// With HopperRowShards::credits, the last CTA then ends the recv call (credits.cuh): every CTA has
// passed its tiles' signal waits and partial loads by then, so no peer writes this call's signals
// any more and recv's partials are read.
__device__ __forceinline__ void finish_counts(const HopperRowShards& sh) {
  __threadfence();
  const unsigned long long ctas = static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  if (atomicAdd(sh.finished, 1ull) != ctas - 1) return;
  __threadfence();
  for (int i = 0; i < sh.count * sh.groups; ++i)
    asm volatile("red.release.gpu.global.max.u64 [%0], %1;" ::"l"(sh.done + i), "l"(kHopperDoneAll) : "memory");
  *sh.finished = 0;
  if (sh.credits) end_recv_call(sh.handle, sh.count);
}

// count_stored behind the CTA's credit gate (HopperRowShards::credits, credits.cuh).
__device__ __forceinline__ void count_pushed(const HopperRowShards& sh, int at, const uint32_t* gate) {
  if (sh.credits) pass_gate(gate);
  count_stored(sh.done, at);
}

// Frees a stage for the producer(s): one arrival per consumer warpgroup on every CTA's barrier.
template <int kCluster>
__device__ __forceinline__ void release(uint64_t* empty, int s) {
  if (s < 0) return;
  if (kCluster == 1) {
    bar_arrive(&empty[s]);
  } else {
#pragma unroll
    for (uint32_t c = 0; c < kCluster; ++c) bar_arrive_cluster(&empty[s], c);
  }
}

#endif  // SYMMEM_HGEMM_DEVICE

// A bf16 tensor of rank 2 or 3 (dims and strides in elements and bytes, innermost first) in boxes of
// `box`, with the 128-byte swizzle.
inline CUtensorMap bf16_tensor_map(const void* base, unsigned rank, const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                   const char* name) {
  CUtensorMap map;
  const cuuint32_t elem[3] = {1, 1, 1};
  const CUresult rc = symmem::detail::driver().cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank, const_cast<void*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS)
    fail<InvalidArgument>(std::string("the own GEMM: cannot describe ") + name + " to the TMA (CUresult " + std::to_string(rc) +
                          "): 16-byte aligned base and rows needed");
  return map;
}
// A row-major bf16 matrix [rows, cols] (ld elements a row) in boxes of box_rows x box_cols.
inline CUtensorMap tensor_map(const void* base, int64_t rows, int64_t cols, int64_t ld, uint32_t box_rows, uint32_t box_cols, const char* name) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 2};
  const cuuint32_t box[2] = {box_cols, box_rows};
  return bf16_tensor_map(base, 2, dims, strides, box, name);
}
// `shards` such matrices one after another (rows x ld elements each) as a tensor of rank 3
// (coordinates: column, row within the matrix, matrix) in boxes of box_rows x box_cols x 1: the
// TMA clips a box at its own matrix's last row.
inline CUtensorMap tensor_map_3d(const void* base, int64_t shards, int64_t rows, int64_t cols, int64_t ld, uint32_t box_rows, uint32_t box_cols,
                                 const char* name) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(shards)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld) * 2, static_cast<cuuint64_t>(ld) * 2 * static_cast<cuuint64_t>(rows)};
  const cuuint32_t box[3] = {box_cols, box_rows, 1};
  return bf16_tensor_map(base, 3, dims, strides, box, name);
}

// The launch of kCluster-CTA clusters (grid of `ctas` CTAs of `threads`, `smem` bytes of dynamic
// shared memory each).
template <int kCluster>
struct ClusterLaunch {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  ClusterLaunch(const ClusterLaunch&) = delete;  // (cfg.attrs points into this object)
  ClusterLaunch(int ctas, int threads, size_t smem, cudaStream_t stream) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = kCluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(ctas);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = kCluster > 1 ? 1 : 0;
  }
};

// How many clusters of kCluster CTAs of one kernel (`threads` a CTA, `smem` bytes of dynamic shared
// memory, its limit raised to that first) fit at one CTA an SM, worked out once a device (a
// kernel's launches ask it every call): one ClusterFit a kernel, kept static by its launcher.
// Throws Unsupported, naming `who`, where none fits.
template <int kCluster>
struct ClusterFit {
  std::mutex mu;
  int by_device[64] = {};
  template <class Kernel>
  int get(Kernel kernel, int dev, int threads, size_t smem, const char* who) {
    std::lock_guard<std::mutex> lock(mu);
    int& cached = by_device[dev & 63];
    if (cached > 0) return cached;
    int sms = 0;
    SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    SYMMEM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    if (kCluster == 1) return cached = sms;
    ClusterLaunch<kCluster> l(kCluster * sms, threads, smem, nullptr);
    int n = 0;
    SYMMEM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &l.cfg));
    if (n <= 0) fail<Unsupported>(std::string(who) + ": no cluster of " + std::to_string(kCluster) + " CTAs fits on this GPU");
    return cached = n;
  }
};

}  // namespace symmem::overlap::ptx
