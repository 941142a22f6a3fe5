// symmem's bf16 GEMM for Hopper: one persistent, warp-specialised kernel.
//
// A CTA is three warpgroups. Warpgroup 0 is the producer: one thread issues TMA loads of A's
// 128 x 64 and B's 64 x 256 tiles into a ring of kStages shared-memory stages, each completed on
// a `full` mbarrier. Warpgroups 1 and 2 are the consumers: each multiplies its 64 rows of the
// 128 x 256 tile with wgmma (m64n256k16, fp32 accumulators in registers) and frees a stage on its
// `empty` mbarrier once the wgmma that read it has retired. In a cluster of two, the CTAs take
// row blocks 2u and 2u + 1 of the same column block and each loads half of B's tile for both
// (TMA multicast); a stage is then free only when the consumers of both CTAs are done with it,
// so each consumer arrives on both CTAs' `empty` barriers. The epilogue rounds a tile into
// registers and, by default (HopperGemmOptions::defer_halves 2), writes its two halves through
// shared memory (stmatrix) into TMA stores while the next tile's first two k-blocks' wgmma run, so
// the tensor cores do not stop for it: 1-2% of the whole GEMM at the overlap's shapes, 3% with
// row shards (1 x H200, session 49: tools/hgemm_probe.cu, HGEMM_VS).
//
// Tiles: a cluster takes units (its row blocks x a 256-column block) in a grouped raster. With
// row shards (HopperRowShards: all_gather_matmul's), the row blocks run shard by shard in the
// order the shards land, and the producer waits (bounded) for a shard's signal before its first
// load of that shard's rows. Nothing else waits: the consumers see only filled stages, so the
// kernel is as safe as the signal wait for any number of ranks (each shard is signalled once per
// operation, after its rows, and reset only after this kernel has finished).
//
// The fused sum (HopperRowShards::sum_shard: matmul_reduce_scatter's fused form): the shard that
// runs last is this rank's own rows; after each of its tiles' k-loop, the producer waits (bounded)
// for every other rank's signal of the tile's row group and loads their partials of the tile's
// rows by TMA into B's part of the ring's stages (64 rows, one consumer's, a stage), and the
// consumers add them to the accumulators (ldmatrix, fp32) before the one rounding in the
// epilogue, which stores into `out`. Those waits come after the tile's k-loop loads, which never
// wait, so the consumers always reach the counts of their previous (peer) tile, which the other
// ranks' partials depend on (overlap.cpp: rs_fused).
//
// The ring (HopperRowShards::ring, matmul_reduce_scatter's epilogue ring): every shard but the
// first adds one partial, the one the previous rank computed for the same rows (landed in the
// partials' slot of that shard), the same way after its k-loop, and goes to C and is counted like
// the fused form's peer shards (from where it travels on to the next rank), but the last (this
// rank's own), which stores scale x the sum into `out`. So at N ranks N - 1 of N shards add one
// partial each, against one shard adding N - 1, and each rank's sum is rounded to bf16 once a
// step (overlap.cpp: rs_fused says why it completes).
//
// Time over cuBLASLt's (the plan symmem tunes; tools/hgemm_probe.cu, one GPU, CUDA graphs of 10
// replayed in turn; H200, session 49, bench/results/*-h200x1-ccaaf47-s49c1-*.json): 8192 x 4096 x
// 3584 0.99, 16384 x 3584 x 4096 0.99, 8192 x 8192 x 7168 0.98, 16384 x 8192 x 7168 0.99,
// 16384 x 7168 x 8192 1.00, and 1.05-1.06 at 16384 x 4096 x 3584, where cuBLASLt runs 128 x 160
// tiles (2048 of ours are 15.5 waves on 132 SMs). Before the deferred epilogue (session 29,
// *-h200x2-2313db6-s29c12-*): 1.10 at 2048 x 7168 x 4096 (3.4 waves of tiles; cuBLASLt's plan
// wastes less of the last). On H100 the same shapes gave 1.00-1.02.
//
// Shared memory layouts (128-byte swizzle, as the TMA writes them and wgmma reads them):
// - A stage: 128 rows x 64 k (128 bytes a row), K-major; a consumer's 64 rows start 8 KiB in.
//   Descriptor: stride between 8-row groups (SBO) 1024 bytes; a k16 step adds 32 bytes.
// - B stage: four 64-column boxes of 64 k rows x 64 n (128 bytes), N-major ("transposed" B).
//   Descriptor: LBO = 8 KiB (the next 64 columns), SBO = 1024 bytes (the next 8 k rows); a k16
//   step adds 2 KiB.
#include "hopper_gemm.hpp"
#include "hopper_ptx.cuh"
#include "hopper_schedule.hpp"
#include "runtime/driver.hpp"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "symmem/device.cuh"
#include "symmem/device/bulk.cuh"
#include "symmem/error.hpp"

namespace symmem::overlap {
namespace {
using namespace ptx;

constexpr int kBM = schedule::kBlockRows, kBN = 256, kBK = 64, kStages = 4, kThreads = 384;
constexpr uint32_t kABytes = kBM * kBK * 2;  // 16 KiB
constexpr uint32_t kBBox = kBK * 64 * 2;     // one 64-column box of B: 8 KiB
constexpr uint32_t kBBytes = 4 * kBBox;      // 32 KiB
constexpr uint32_t kCStage = 2 * 64 * 128 * 2;  // the epilogue: half a tile of each consumer, 32 KiB
// (+ 1 KiB to align the stages to the swizzle's 1024 bytes: 225 KiB of the 227 an SM allows)
constexpr size_t kSmemBytes = size_t(kStages) * (kABytes + kBBytes) + kCStage + (2 * kStages + 1) * sizeof(uint64_t) + 1024;

struct Args {
  __nv_bfloat16* c;
  int64_t ldc;
  int m, n, k;
  int group_m;
  HopperRowShards shards;  // shards.rows == 0: rows in order, no waits
  bool has_local;          // shards.first's rows come from map_local
  int count_at;            // HopperGemmOptions::count_at
  int defer;               // HopperGemmOptions::defer_halves
};

#ifdef SYMMEM_HGEMM_DEVICE
// D (64 x 256, fp32, the warpgroup's 128 registers a thread) += A (64 x 16, K-major) x B (16 x 256,
// N-major), both bf16 in shared memory behind descriptors; scale_d = 0 overwrites D.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      :
      "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
      "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
      "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
      "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
      "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
      "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
      "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
      "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
      "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
      "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
      "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
      "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
      "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
      "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
      "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// This CTA's tile of unit u: its shard (-1 without shards), first row of C, row within the shard
// and first column (the producer and the consumers walk the same units).
template <int kCluster>
__device__ __forceinline__ void unit_tile(const Args& args, int u, int units_m, int units_n, uint32_t crank, int& shard, int& m0,
                                          int& row_in_shard, int& n0) {
  int um, un;
  schedule::unit_coords(u, units_m, units_n, args.group_m, um, un);
  schedule::tile_rows(args.shards.rows, args.shards.count, args.shards.first, um * kCluster + static_cast<int>(crank), shard, m0,
                      row_in_shard);
  n0 = un * kBN;
}

// A consumer's place in the stage ring.
struct Ring {
  int stage;
  uint32_t phase;
  int prev;  // the stage whose wgmma may still run (-1: none)
};
struct Stages {
  uint8_t* sa;
  uint8_t* sb;
  uint64_t* full;
  uint64_t* empty;
  int cw;  // consumer warpgroup: rows 64 cw .. 64 cw + 63 of the tile
  bool leader;
};

// One k-block: wait for its stage, issue its four wgmma, then free the previous stage once its
// wgmma have retired (one group stays in flight).
template <int kCluster>
__device__ __forceinline__ void consume(const Stages& st, Ring& ring, float (&acc)[128], int kb) {
  mbar_wait(&st.full[ring.stage], ring.phase);
  const uint32_t a_addr = smem_addr(st.sa + ring.stage * kABytes) + st.cw * (kABytes / 2);
  const uint32_t b_addr = smem_addr(st.sb + ring.stage * kBBytes);
  wgmma_fence();
  wgmma_keep(acc);
#pragma unroll
  for (int kk = 0; kk < kBK / 16; ++kk)
    wgmma_m64n256k16(acc, sw128_desc(a_addr + kk * 32, 16, 1024), sw128_desc(b_addr + kk * 2048, kBBox, 1024), (kb | kk) != 0 ? 1 : 0);
  wgmma_commit();
  wgmma_keep(acc);
  wgmma_wait<1>();
  wgmma_keep(acc);
  if (st.leader) release<kCluster>(st.empty, ring.prev);
  ring.prev = ring.stage;
  if (++ring.stage == kStages) {
    ring.stage = 0;
    ring.phase ^= 1;
  }
}


// The shared-memory address of thread (warp, lane)'s 8 x 8 matrix of x4 group j (j even) in a
// consumer's 64-row half tile laid out as 64-column boxes of 64 rows (8 KiB, 128-byte swizzle): the
// layout the epilogue's stmatrix writes and the TMA reads. The x4's four matrices hold rows
// 16 warp + {0, 8} and columns 8 j + {0, 8}: the accumulators' layout.
__device__ __forceinline__ uint32_t fragment_addr(const uint8_t* base, int warp, int lane, int j) {
  const int mi = lane / 8, row = warp * 16 + (mi & 1) * 8 + lane % 8, col = (j + (mi >> 1)) * 8;
  return smem_addr(base + (col / 64) * kBBox + row * 128 + ((((col % 64) / 8) ^ (row % 8)) * 16));
}

// The fused sum: adds the 64 x 256 bf16 partial that the producer loaded into B's part of a stage
// (four 64-column boxes, 128-byte swizzle: the epilogue's layout) to this warpgroup's accumulators.
// ldmatrix hands each thread the elements its accumulators hold (the inverse of the epilogue's
// stmatrix, same addresses).
__device__ __forceinline__ void add_partial(float (&acc)[128], const uint8_t* stage_b, int warp, int lane) {
#pragma unroll
  for (int j = 0; j < 32; j += 2) {
    uint32_t r[4];
    ldmatrix_x4(fragment_addr(stage_b, warp, lane, j), r[0], r[1], r[2], r[3]);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&r[q]));
      acc[4 * j + 2 * q] += f.x;
      acc[4 * j + 2 * q + 1] += f.y;
    }
  }
}

// Whether a tile of `shard` adds landed partials after its k-loop (HopperRowShards: the fused
// sum's last shard, every other rank's; the ring's every shard but the first, its predecessor's
// one), and which slot (partials' rows, signal) the j-th of them (1-based) is in. (A timeout names
// its sender: rank p for the fused sum's slot p; for the ring's, the predecessor, whose index is
// `first`. The producer's waits take the ring's one slot in a branch of their own: a select of the
// sender there spilled registers of the producer's 40.)
__device__ __forceinline__ bool adds_partials(const HopperRowShards& s, int shard) {
  return shard >= 0 && s.sum_shard >= 0 && (s.ring ? shard != s.first : shard == s.sum_shard);
}

// A consumer's finished tile, rounded to bf16 (held[i] packs its accumulators 2i and 2i + 1), on
// its way out: where it goes and which half goes next.
struct Held {
  uint32_t v[64];
  bool out;      // into map_out (else map_c)
  int col, row;  // the tile's first column and this consumer's first row there
  int next;      // the next half to store (2: both are out)
  int done;      // its HopperRowShards::done word once both halves are out (-1: none)
};

// Stores half kHalf (columns 128 kHalf .. + 127) of a held tile through this consumer's 16 KiB of
// shared memory (two 64 x 64 boxes, 128-byte swizzle): stmatrix from the accumulators' layout
// (thread (warp, lane) holds rows 16 warp + lane / 4 (+ 8), columns 8j + 2 (lane % 4) + {0, 1}),
// then one thread's TMA stores, clipped at m and n, which run on under what follows; only the
// next half's reuse of the buffer waits for them to have read it.
template <int kHalf>
__device__ __forceinline__ void store_half(const Held& h, const CUtensorMap* map, uint8_t* my_c, int warp, int lane, int cw, bool leader) {
  if (leader) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  named_sync(1 + cw, 128);
#pragma unroll
  for (int jj = 0; jj < 16; jj += 2) {
    const int i = 2 * (kHalf * 16 + jj);
    stmatrix_x4(fragment_addr(my_c, warp, lane, jj), h.v[i], h.v[i + 1], h.v[i + 2], h.v[i + 3]);
  }
  device::fence_proxy_async_shared();  // the stmatrix writes, before the TMA store reads them
  named_sync(1 + cw, 128);
  if (leader) {
    tma_store(map, my_c, h.col + kHalf * 128, h.row);
    tma_store(map, my_c + 8192, h.col + kHalf * 128 + 64, h.row);
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  }
}

#endif  // SYMMEM_HGEMM_DEVICE

template <int kCluster>
__global__ void __launch_bounds__(kThreads, 1)
    hopper_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                       const __grid_constant__ CUtensorMap map_local, const __grid_constant__ CUtensorMap map_c,
                       const __grid_constant__ CUtensorMap map_part, const __grid_constant__ CUtensorMap map_out, Args args) {
#ifdef SYMMEM_HGEMM_DEVICE
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_aligned_1024(smem_raw);
  uint8_t* sa = smem;                                   // kStages x kABytes
  uint8_t* sb = smem + kStages * kABytes;               // kStages x kBBytes
  uint8_t* sc = sb + kStages * kBBytes;                 // kCStage (the epilogue)
  uint64_t* full = reinterpret_cast<uint64_t*>(sc + kCStage);
  uint64_t* empty = full + kStages;
  uint32_t* gate = reinterpret_cast<uint32_t*>(empty + kStages);  // HopperRowShards::credits (credits.cuh)
  const int wg = threadIdx.x / 128;
  const uint32_t crank = kCluster > 1 ? cluster_rank() : 0;
  const int units_m = (args.m + kBM * kCluster - 1) / (kBM * kCluster);
  const int units_n = (args.n + kBN - 1) / kBN;
  const int units = units_m * units_n;
  const int kblocks = (args.k + kBK - 1) / kBK;
  const int first_unit = kCluster > 1 ? static_cast<int>(cluster_id()) : static_cast<int>(blockIdx.x);
  const int unit_step = kCluster > 1 ? static_cast<int>(cluster_count()) : static_cast<int>(gridDim.x);
  const int group_rows = args.shards.rows / args.shards.groups;  // (0 without shards)
  const int peers = args.shards.ring ? 1 : args.shards.count - 1;  // the partials an adding tile adds

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 2 * kCluster);  // one arrival per consumer warpgroup of every CTA of the cluster
    }
    *gate = 0;
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (kCluster > 1) cluster_sync(); else __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      uint64_t landed = 0;  // shards whose signal this thread has seen
      int summable = -1;  // the partials' waits: shard << 16 | the row groups of it whose partials have all landed
      for (int u = first_unit; u < units; u += unit_step) {
        int shard, m0, row_in_shard, n0;
        unit_tile<kCluster>(args, u, units_m, units_n, crank, shard, m0, row_in_shard, n0);
        const bool local = shard >= 0 && shard == args.shards.first;
        if (shard >= 0 && !local && args.shards.wait && !(landed >> shard & 1)) {
          // Bounded (a timeout is recorded for the host to raise; the tile then computes on what
          // is there). The acquire orders the landed rows for this thread; the proxy fence, for
          // its TMA loads.
          hopper_wait_signal(args.shards, shard, args.shards.target, shard);
          device::fence_proxy_async_global();
          landed |= uint64_t(1) << shard;
        }
        const CUtensorMap* ma = local && args.has_local ? &map_local : &map_a;
        const int arow = local && args.has_local ? row_in_shard : m0;
        for (int kb = 0; kb < kblocks; ++kb) {
          mbar_wait(&empty[stage], phase ^ 1);
          mbar_expect_tx(&full[stage], kABytes + kBBytes);
          tma_load(sa + stage * kABytes, ma, kb * kBK, arow, &full[stage]);
          if (kCluster == 1) {
#pragma unroll
            for (int i = 0; i < 4; ++i) tma_load(sb + stage * kBBytes + i * kBBox, &map_b, n0 + i * 64, kb * kBK, &full[stage]);
          } else {  // this CTA's half of B's boxes, to both CTAs
#pragma unroll
            for (int i = 0; i < 2; ++i) {
              const int box = static_cast<int>(crank) * 2 + i;
              tma_load_multicast(sb + stage * kBBytes + box * kBBox, &map_b, n0 + box * 64, kb * kBK, &full[stage], 0x3);
            }
          }
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
        if (adds_partials(args.shards, shard)) {
          // The fused sum or the ring: once the tile's partials of this row group have landed
          // (bounded; a timeout is recorded and the tile then adds what is there), each partial's
          // rows of the tile go through the ring of stages, 64 rows (one consumer's) a stage,
          // consumer 0's first. Not multicast: the cluster's CTAs hold different rows (both take
          // the same stages). A CTA's tiles run shard by shard and, within a shard, row group by
          // row group, so one (shard, group) mark covers the waits already made.
          const int g = row_in_shard / group_rows;
          if ((summable >> 16) != shard || g >= (summable & 0xFFFF)) {
            if (args.shards.ring) {  // slot `shard`, from the predecessor (whose index is `first`)
              hopper_wait_signal(args.shards, shard, static_cast<uint64_t>(g) + 1, args.shards.first);
            } else {
              for (int j = 1; j <= peers; ++j) {
                const int p = hopper_partial_slot(args.shards, shard, j);
                hopper_wait_signal(args.shards, p, static_cast<uint64_t>(g) + 1, p);
              }
            }
            device::fence_proxy_async_global();
            summable = shard << 16 | (g + 1);
          }
          for (int j = 1; j <= peers; ++j) {
            const int p = hopper_partial_slot(args.shards, shard, j);
            for (int cw = 0; cw < 2; ++cw) {
              mbar_wait(&empty[stage], phase ^ 1);
              mbar_expect_tx(&full[stage], kBBytes);
#pragma unroll
              for (int i = 0; i < 4; ++i)
                tma_load(sb + stage * kBBytes + i * kBBox, &map_part, n0 + i * 64, p * args.shards.rows + row_in_shard + cw * 64, &full[stage]);
              if (++stage == kStages) {
                stage = 0;
                phase ^= 1;
              }
            }
          }
        }
      }
    } else if (threadIdx.x == 32 && args.shards.credits) {  // (after the producer: none of its values live here)
      open_gate(args.shards.handle, gate);
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int cw = wg - 1;  // this consumer's 64 rows of the tile
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const bool leader = t == 0;
    Ring ring{0, 0, -1};
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    const Stages st{sa, sb, full, empty, cw, leader};
    uint8_t* my_c = sc + cw * (kCStage / 2);
    int pending = -1;  // the done word of this warpgroup's last tile, stored but not yet counted (args.shards.done)
    Held held;
    held.next = 2;
    held.done = -1;
    // The next half of the held tile out; once both are, its done word is pending.
    auto store_next = [&]() {
      if (held.next == 0)
        store_half<0>(held, held.out ? &map_out : &map_c, my_c, warp, lane, cw, leader);
      else
        store_half<1>(held, held.out ? &map_out : &map_c, my_c, warp, lane, cw, leader);
      if (++held.next == 2 && held.done >= 0) {
        pending = held.done;
        held.done = -1;
      }
    };
    for (int u = first_unit; u < units; u += unit_step) {
      int shard, m0, row_in_shard, n0;
      unit_tile<kCluster>(args, u, units_m, units_n, crank, shard, m0, row_in_shard, n0);
      ring.prev = -1;
      for (int kb = 0; kb < kblocks; ++kb) {
        consume<kCluster>(st, ring, acc, kb);
        // The last tile's deferred halves, one a k-block while this k-block's wgmma run: the
        // tensor cores do not wait for the epilogue (HopperGemmOptions::defer_halves).
        if (held.next < 2) store_next();
        if (kb >= args.count_at && pending >= 0) {
          if (leader) count_pushed(args.shards, pending, gate);
          pending = -1;
        }
      }
      wgmma_wait<0>();
      wgmma_keep(acc);
      if (leader) release<kCluster>(empty, ring.prev);
      while (held.next < 2) store_next();  // (a k-loop too short to have stored them)
      if (pending >= 0) {                  // (or to have counted them)
        if (leader) count_pushed(args.shards, pending, gate);
        pending = -1;
      }
      const bool summed = shard >= 0 && shard == args.shards.sum_shard;
      if (adds_partials(args.shards, shard)) {  // the producer's 2 x peers stages, this consumer's every other one
        for (int e = 0; e < 2 * peers; ++e) {
          mbar_wait(&full[ring.stage], ring.phase);
          if ((e & 1) == cw) {
            add_partial(acc, sb + ring.stage * kBBytes, warp, lane);
            named_sync(1 + cw, 128);  // every thread's reads of the stage, before the leader frees it
          }
          if (leader) release<kCluster>(empty, ring.stage);
          if (++ring.stage == kStages) {
            ring.stage = 0;
            ring.phase ^= 1;
          }
        }
        if (summed && args.shards.scale != 1.0f) {  // (a summed tile adds partials: count >= 2)
#pragma unroll
          for (int i = 0; i < 128; ++i) acc[i] *= args.shards.scale;
        }
      }
      // Epilogue: the tile rounded into held; of its two halves, the last args.defer go out under
      // the next tile's first k-blocks (or after the last tile), the rest now. (Stores from
      // registers instead of through shared memory and the TMA cost 4-5% of the whole GEMM: every
      // CTA's epilogue meets HBM at once.)
#pragma unroll
      for (int i = 0; i < 64; ++i) held.v[i] = pack_bf16(acc[2 * i], acc[2 * i + 1]);
      held.out = summed;
      held.col = n0;
      held.row = (summed ? row_in_shard : m0) + cw * 64;
      held.next = 0;
      held.done = args.shards.done != nullptr && shard >= 0 && !summed ? shard * args.shards.groups + row_in_shard / group_rows : -1;
      for (int h = args.defer; h < 2; ++h) store_next();
    }
    while (held.next < 2) store_next();
    if (leader) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // before shared memory goes
    if (pending >= 0 && leader) count_pushed(args.shards, pending, gate);
  }
  // No CTA may leave while its cluster peer can still write its shared memory or arrive on its
  // barriers. (Not .aligned: the producer's thread 0 arrives here after the rest of its warp.)
  if (kCluster > 1) asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
  if (args.shards.finished != nullptr) {
    if (kCluster == 1) asm volatile("barrier.sync 0;" ::: "memory");
    if (threadIdx.x == 0) finish_counts(args.shards);
  }
#endif
}

template <int kCluster>
void launch(int dev, const CUtensorMap& ma, const CUtensorMap& mb, const CUtensorMap& ml, const CUtensorMap& mc, const CUtensorMap& mp,
            const CUtensorMap& mo, const Args& args, int max_ctas, cudaStream_t stream) {
  const int units = ((args.m + kBM * kCluster - 1) / (kBM * kCluster)) * ((args.n + kBN - 1) / kBN);
  static ClusterFit<kCluster> fit;
  int clusters = fit.get(hopper_gemm_kernel<kCluster>, dev, kThreads, kSmemBytes, "hopper_gemm");
  if (max_ctas > 0) clusters = std::min(clusters, std::max(1, max_ctas / kCluster));
  clusters = std::min(clusters, units);
  ClusterLaunch<kCluster> l(clusters * kCluster, kThreads, kSmemBytes, stream);
  SYMMEM_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, hopper_gemm_kernel<kCluster>, ma, mb, ml, mc, mp, mo, args));
}

}  // namespace

bool hopper_gemm_supported(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return major == 9 && minor == 0;
}

void check_gemm_operands(const char* who, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb,
                         const void* c, int64_t ldc, const HopperGemmOptions& opt) {
  require(m > 0 && n > 0 && k > 0 && m < (int64_t(1) << 31) && n < (int64_t(1) << 31) && k < (int64_t(1) << 31), who,
          ": m, n, k must be positive and below 2^31 (got ", m, ", ", n, ", ", k, ")");
  require(n % 8 == 0 && lda % 8 == 0 && ldb % 8 == 0 && ldc % 8 == 0 && lda >= k && ldb >= n && ldc >= n, who,
          ": n and the leading dimensions must be multiples of 8 elements, lda >= k, ldb >= n, ldc >= n");
  for (const void* p : {a, b, c}) require(reinterpret_cast<uintptr_t>(p) % 16 == 0, who, ": A, B and C must be 16-byte aligned");
  require(opt.group_m > 0, who, ": group_m must be positive (got ", opt.group_m, ")");
}

void hopper_gemm(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc,
                 const HopperGemmOptions& opt, cudaStream_t stream, const HopperRowShards* shards) {
  if (m == 0 || n == 0) return;
  check_gemm_operands("hopper_gemm", m, n, k, a, lda, b, ldb, c, ldc, opt);
  require(opt.cluster == 1 || opt.cluster == 2, "hopper_gemm: cluster must be 1 or 2 (got ", opt.cluster, ")");
  require(opt.defer_halves >= 0 && opt.defer_halves <= 2, "hopper_gemm: defer_halves must be 0, 1 or 2 (got ", opt.defer_halves, ")");
  if (shards != nullptr) {
    require(shards->count >= 1 && shards->count <= 64 && shards->rows > 0 && shards->rows % (kBM * opt.cluster) == 0 &&
                static_cast<int64_t>(shards->rows) * shards->count == m && shards->first >= 0 && shards->first < shards->count,
            "hopper_gemm: row shards must be 1-64 blocks of a multiple of ", kBM * opt.cluster, " rows covering m (got ",
            shards->count, " x ", shards->rows, " for m ", m, ", first ", shards->first, ")");
    require(shards->local == nullptr || reinterpret_cast<uintptr_t>(shards->local) % 16 == 0,
            "hopper_gemm: the local shard must be 16-byte aligned");
    require(shards->groups >= 1 && shards->rows % shards->groups == 0 && (shards->rows / shards->groups) % (kBM * opt.cluster) == 0,
            "hopper_gemm: row groups must split a shard into runs of a multiple of ", kBM * opt.cluster, " rows (got ", shards->groups,
            " groups of a ", shards->rows, "-row shard)");
    if (shards->sum_shard >= 0) {
      require(shards->sum_shard == (shards->first + 1) % shards->count && shards->wait == 0 && shards->local == nullptr,
              "hopper_gemm: the fused sum's shard must be the one that runs last (first + 1), with no shard waits or local shard");
      require(shards->partials != nullptr && shards->out != nullptr && reinterpret_cast<uintptr_t>(shards->partials) % 16 == 0 &&
                  reinterpret_cast<uintptr_t>(shards->out) % 16 == 0,
              "hopper_gemm: the fused sum needs 16-byte aligned partials and out");
    }
    require(shards->finished == nullptr || shards->done != nullptr, "hopper_gemm: row shards' finished word needs their done words");
    require(!shards->ring || (shards->sum_shard >= 0 && shards->count >= 2),
            "hopper_gemm: the ring needs sum_shard (the shard whose sum goes to out) and at least 2 shards");
  }
  int dev = 0;
  SYMMEM_CUDA_CHECK(cudaGetDevice(&dev));
  if (!hopper_gemm_supported(dev)) fail<Unsupported>("hopper_gemm: needs a Hopper GPU (compute capability 9.0)");
  const CUtensorMap ma = tensor_map(a, m, k, lda, kBM, kBK, "A");
  const CUtensorMap mb = tensor_map(b, k, n, ldb, kBK, 64, "B");
  const bool has_local = shards != nullptr && shards->local != nullptr;
  const CUtensorMap ml = has_local ? tensor_map(shards->local, shards->rows, k, shards->local_ld, kBM, kBK, "the local shard") : ma;
  // With row shards the raster is clipped to a shard's units (not a row group's: a group may span
  // row groups, which delays the first groups' counts but not what they count; the host models
  // HopperSchedule.*FusedForm* and *EpilogueRing* walk both clips to completion).
  const int group = shards != nullptr ? schedule::shard_group(shards->rows, opt.cluster, opt.group_m) : opt.group_m;
  Args args{static_cast<__nv_bfloat16*>(c), ldc, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), group,
            HopperRowShards{}, has_local, opt.count_at, opt.defer_halves};
  if (shards != nullptr) args.shards = *shards;
  const CUtensorMap mc = tensor_map(c, m, n, ldc, 64, 64, "C");
  const bool sum = shards != nullptr && shards->sum_shard >= 0;
  const CUtensorMap mp = sum ? tensor_map(shards->partials, static_cast<int64_t>(shards->rows) * shards->count, n, n, 64, 64, "the partials") : mc;
  const CUtensorMap mo = sum ? tensor_map(shards->out, shards->rows, n, n, 64, 64, "the summed rows' output") : mc;
  if (opt.cluster == 2)
    launch<2>(dev, ma, mb, ml, mc, mp, mo, args, opt.max_ctas, stream);
  else
    launch<1>(dev, ma, mb, ml, mc, mp, mo, args, opt.max_ctas, stream);
}

}  // namespace symmem::overlap
