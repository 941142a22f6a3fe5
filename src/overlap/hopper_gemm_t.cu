// symmem's own GEMM in transposed tiles (hopper_gemm_t). all_gather_matmul's own form runs in it
// where detail::gather_transposed says (Form::kOwnGatherT): row shards through 3-D tensor maps
// (shard, row within it, column), so a shard's partial last tile is clipped at its own last row,
// the producer's shard waits bounded as hopper_gemm's. matmul_reduce_scatter's fused form runs in
// it where detail::reduce_transposed says (Form::kFusedT; the kSumC instantiation: done counts per
// overlapped row group, the peers' partials through the summing consumer's C slots; kSum, with
// HopperRowShards::sum_in_ring, the partials through the stage ring instead; host model
// HopperTModel.*). A shard's row tiles are 160
// rows, its last ones 128 where that shortens the walk over the clusters (schedule::t_choose_tall:
// 8192-row shards in 160-row tiles alone end in a partial tile and a partial wave; session 58,
// 1 x H200, all_gather_matmul's 16384 x 7168 x 4096 over 2 shards 1356 us against 1395). At 2
// shards the fused sum takes the straddle where schedule::t_choose_straddle says (HopperRowShards::
// straddle: one row of tiles across the two shards, every tile 160 rows; session 62, 2 x H200, 8B
// mm+rs M 16384 1.015-1.035x the GEMM alone against 1.043-1.062 without, four pairs).
// symmem-hgemm-probe (HGEMM_T=1) checks the GEMM against cuBLASLt and times it.
//
// Why: at 16384 rows cuBLASLt's fastest plan on an H200 ("tile 29") runs tiles of 160 of C's rows
// x 128 of its columns, clusters of two along the columns, and is 5-9% faster there than every
// other plan and than hopper_gemm.cu's 128 x 256 tiles (docs/NOTES.md, "What stands in the way",
// the TP = 2 item). A 160-row tile cannot be wgmma's M (64 rows a warpgroup), so this kernel
// computes C^T = B^T A^T: wgmma's M is 64 of C's columns, its N the tile's 160 rows (m64n160k16,
// 80 fp32 accumulators a thread a set).
//
// A CTA is three warpgroups: warpgroup 0's first thread issues the TMA loads into a ring of
// kStages stages (a `full` mbarrier each); warpgroups 1 and 2 multiply, ping-pong: each takes
// every other tile of the CTA whole (two m64n160 accumulator sets, C's columns 0-63 and 64-127),
// so that one's drain and epilogue run under the other's k-loop, and frees a stage on every
// cluster CTA's `empty` barrier. (Session 57, 1 x H200, 16384 x 4096 x 7168: the first form, both
// consumers on one tile, 64 columns each, kept the tensor cores busy 97.1% of the time against
// cuBLASLt's 99.4%, which runs tiles this way; deferring its epilogue changed nothing.) The
// cluster's two CTAs take column blocks 2v and 2v + 1 of the same 160 rows; each loads 80 of A's
// rows for both (TMA multicast) and its own B box pair. Persistent over units of 160 rows x 256
// columns in a grouped raster (schedule::unit_coords).
//
// Shared memory (128-byte swizzle, as the TMA writes it):
// - A stage: 160 rows x 64 k (128 bytes a row), K-major: wgmma's B operand (N = 160). Descriptor
//   as hopper_gemm.cu's A: SBO 1024 bytes (8 rows); a k16 step adds 32 bytes.
// - B stage: two 64-column boxes of 64 k rows x 64 n (128 bytes a k row), N-major: box h is the
//   wgmma A operand (M = 64) of accumulator set h, transposed (MN-major). Descriptor as
//   hopper_gemm.cu's B: LBO 8 KiB, SBO 1024 bytes (8 k rows); a k16 step adds 2 KiB.
// - C: two 80 x 64 slots a consumer (20 KiB), row-major, each written by stmatrix .trans from
//   the C^T fragments and stored by the TMA (clipped at m and n), four a tile; a 128-row tile's
//   second half is 48 rows, stored through maps whose box is 48 rows (map_c48, map_out48), its
//   rows 128-159 being the next tile's. A 128-row tile loads as a 160-row one and multiplies in
//   m64n128k16.
#include "hopper_gemm.hpp"
#include "hopper_ptx.cuh"
#include "hopper_schedule.hpp"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>

#include "symmem/error.hpp"

namespace symmem::overlap {
namespace {
using namespace ptx;

constexpr int kTR = 160, kTC = 128, kBK = 64, kStages = 5, kThreads = 384, kCluster = 2;
constexpr uint32_t kAHalf = (kTR / 2) * kBK * 2;  // 80 rows: one CTA's multicast, 10 KiB
constexpr uint32_t kABytes = 2 * kAHalf;          // 20 KiB
constexpr uint32_t kBBox = kBK * 64 * 2;          // 8 KiB
constexpr uint32_t kBBytes = 2 * kBBox;           // 16 KiB
constexpr uint32_t kCBox = kTR * 64 * 2;          // a consumer's two slots, 20 KiB
constexpr uint32_t kCHalf = kCBox / 2;            // one slot: 80 rows x 64 columns
constexpr uint32_t kPartBox = (kTR / 2) * 64 * 2;  // the fused sum: a partial's 80 x 64 box, 10 KiB
// (Barriers: full, empty, the gate and straddle words, pbar[2], the dynamic schedule's ufull[2]
// and uempty[2]; then its words: tile_word[kStages][8], uslot[2], ended, pstate[2], pend[8].)
constexpr size_t kSmemBytes = size_t(kStages) * (kABytes + kBBytes) + 2 * kCBox + (2 * kStages + 7) * sizeof(uint64_t) + (8 * kStages + 13) * 4 + 1024;
constexpr uint32_t kEndOfTiles = 0xFFFFFFFFu;  // the dynamic schedule's tile word past the last tile
static_assert(kSmemBytes <= 227 * 1024, "shared memory");

struct TArgs {
  int m, n, k, group_m;
  HopperRowShards shards;  // without shards: one shard of m rows, no waits
  bool has_local;          // shards.first's rows come from map_local
  int tall;                // a shard's 160-row tiles (schedule::t_tall); the rest in tiles of 128
  const __nv_bfloat16* c;  // C (the straddle's sums read its rows of shards.sum_shard), ldc elements a row
  int ldc;
  unsigned* sched;         // HopperGemmOptions::tile_counter (the dynamic instantiation only), or null
};

#ifdef SYMMEM_HGEMM_DEVICE
// D (64 x 160, fp32, 80 registers a thread) += A (64 x 16, MN-major) x B (16 x 160, K-major).
__device__ __forceinline__ void wgmma_m64n160k16_ta(float (&d)[80], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %82, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n160k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
      "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79}, %80, %81, p, 1, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),
        "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
        "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
        "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]),
        "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
        "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// The same with N = 128 (a 128-row tile: 64 accumulators a thread, d[0..63] of the set).
__device__ __forceinline__ void wgmma_m64n128k16_ta(float (&d)[80], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
      "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),
        "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
        "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
        "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// Half H (C's rows 80 H .. 80 H + 79 of the tile, from `row` of `shard` on) of 64 of C's columns,
// rounded from the accumulators of one m64n160 set, through slot H of the warpgroup's two
// shared-memory slots (stmatrix .trans) into a TMA store. Thread (warp, lane) holds D[16 warp + lane / 4 (+ 8)][8 i +
// 2 (lane % 4) + {0, 1}] in acc[4 i + {0, 1}] (acc[4 i + {2, 3}] for the + 8 row): D's rows are
// C's columns and its columns C's rows. Each 8 x 8 matrix goes out transposed, so lane j of a
// matrix's eight names the shared-memory row of C's row 8 i + j, at column 16 warp (+ 8). The slot
// was last read by the store before the newest bulk group (the other slot's, or none, came
// after it): wait_group.read 1. kGroups: the half's 8-row groups (10; 6 for a 128-row tile's
// second half, rows 80-127, through a map whose box is 48 rows).
template <int H, int kGroups = 10>
__device__ __forceinline__ void store_half(const float (&acc)[80], const CUtensorMap* map, uint8_t* my_c, int warp, int lane, bool leader,
                                           int col0, int row, int shard, int bar) {
  if (leader) asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
  named_sync(bar, 128);
#pragma unroll
  for (int i = 10 * H; i < 10 * H + kGroups; i += 2) {
    const int q = lane / 8, row = 8 * (i + (q >> 1)) + lane % 8, col = 16 * warp + 8 * (q & 1);
    const uint32_t addr = smem_addr(my_c + row * 128 + (((col / 8) ^ (row % 8)) * 16));
    stmatrix_x4_trans(addr, pack_bf16(acc[4 * i], acc[4 * i + 1]), pack_bf16(acc[4 * i + 2], acc[4 * i + 3]),
                      pack_bf16(acc[4 * i + 4], acc[4 * i + 5]), pack_bf16(acc[4 * i + 6], acc[4 * i + 7]));
  }
  device::fence_proxy_async_shared();  // the stmatrix writes, before the TMA store reads them
  named_sync(bar, 128);
  if (leader) {
    tma_store_3d(map, my_c + H * kCHalf, col0, row, shard);
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  }
}

// The fused sum: adds half H (rows 80 H .. 80 H + 79 of the tile) of a peer's 160 x 128 bf16
// partial, which the producer loaded into a stage's A area as two 64-column boxes of 80 rows
// (128-byte swizzle: the layout store_half writes), to the two accumulator sets. ldmatrix .trans
// hands each thread the elements its accumulators hold (the inverse of store_half's stmatrix
// .trans, same addresses). kGroups as store_half's (a 128-row tile's second half: 6).
template <int H, int kGroups = 10>
__device__ __forceinline__ void add_partial_half(float (&acc0)[80], float (&acc1)[80], const uint8_t* stage_a, int warp, int lane) {
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    float(&acc)[80] = c == 0 ? acc0 : acc1;
#pragma unroll
    for (int i = 10 * H; i < 10 * H + kGroups; i += 2) {
      const int q = lane / 8, row = 8 * (i - 10 * H + (q >> 1)) + lane % 8, col = 16 * warp + 8 * (q & 1);
      uint32_t r[4];
      ldmatrix_x4_trans(smem_addr(stage_a + c * kPartBox + row * 128 + (((col / 8) ^ (row % 8)) * 16)), r[0], r[1], r[2], r[3]);
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&r[x]));
        acc[4 * i + 2 * x] += f.x;
        acc[4 * i + 2 * x + 1] += f.y;
      }
    }
  }
}
#endif  // SYMMEM_HGEMM_DEVICE

template <bool kSum, bool kSumC, bool kDyn = false>
__global__ void __launch_bounds__(kThreads, 1)
    hopper_gemm_t_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ CUtensorMap map_local, const __grid_constant__ CUtensorMap map_c,
                         const __grid_constant__ CUtensorMap map_c48, const __grid_constant__ CUtensorMap map_part,
                         const __grid_constant__ CUtensorMap map_out, const __grid_constant__ CUtensorMap map_out48, TArgs args) {
#ifdef SYMMEM_HGEMM_DEVICE
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_aligned_1024(smem_raw);
  uint8_t* sa = smem;                      // kStages x kABytes
  uint8_t* sb = sa + kStages * kABytes;    // kStages x kBBytes
  uint8_t* sc = sb + kStages * kBBytes;    // 2 x kCBox
  uint64_t* full = reinterpret_cast<uint64_t*>(sc + 2 * kCBox);
  uint64_t* empty = full + kStages;
  uint32_t* gate = reinterpret_cast<uint32_t*>(empty + kStages);  // HopperRowShards::credits (credits.cuh)
  uint32_t* straddled = gate + 1;                                  // the straddle: this CTA's straddle tiles in C
  uint64_t* pbar = empty + kStages + 1;                            // kSumC: each consumer's partial loads
  uint64_t* ufull = pbar + 2;     // the dynamic schedule: CTA 1's slot j % 2 holds tile j's unit
  uint64_t* uempty = ufull + 2;   // ... and CTA 1's producer has read it (in CTA 0)
  // A stage's tile where it is a tile's first k-block: its unit, then schedule::TTile's fields.
  uint32_t* tile_word = reinterpret_cast<uint32_t*>(uempty + 2);
  uint32_t* uslot = tile_word + 8 * kStages;
  uint32_t* ended = uslot + 2;     // a consumer found kEndOfTiles
  // The dynamic schedule's producer state in CTA 0 (in shared memory, not registers, so that the
  // producer fits its 40: the counter's value for the tile after next, and the next tile's unit).
  uint32_t* pstate = ended + 1;
  uint32_t* pend = pstate + 2;  // (and the producer's next tile words, copied to its first stage's tile_word)
  const int wg = warpgroup_index();
  const uint32_t crank = cluster_rank();
  // (The straddle, HopperRowShards::straddle, only in kSumC: a shard's whole 160-row tiles and
  // one row of tiles more, first.)
  const int strad = kSumC ? args.shards.straddle : 0;
  const int per = strad > 0 ? args.shards.rows / kTR : schedule::t_row_tiles(args.shards.rows, args.tall);  // row tiles a shard
  const int units_n = (args.n + kTC * kCluster - 1) / (kTC * kCluster);
  const int units = (args.shards.count * per + (strad > 0 ? 1 : 0)) * units_n;
  const int kblocks = (args.k + kBK - 1) / kBK;
  const int first_unit = static_cast<int>(cluster_id()), unit_step = static_cast<int>(cluster_count());
  constexpr bool dyn = kDyn && !kSum;  // the dynamic schedule (HopperGemmOptions::tile_counter in args.sched)
  // The fused sum: shard sum_shard's tiles, after their k-loop, add the count - 1
  // partials of their rows, two stages a partial (80 rows each); group_rows: HopperRowShards::done's
  // row groups.
  const int peers = args.shards.count - 1;
  const int group_rows = args.shards.rows / args.shards.groups;
  auto summed = [&](int shard) { return kSum && shard == args.shards.sum_shard; };
  // kSumC: a summed tile's partials go through its consumer's C slots, not the ring (below, after
  // the k-loop), so that no stage is held through the drain and adds, and no turn through the
  // partials' waits, while the other consumer's k-loop runs on the rest of the ring (session 61,
  // 2 x H200, 8B mm+rs M 16384: summing through the ring cost 1.7% over counting alone; starting
  // the accumulators from the partial before the k-loop, to free the stages at once, was 1.4%
  // slower in the operation: the adds then sat on the tensor cores' path; session 63 took it from
  // 2 shards to any count: at 4 and more the ring's 6+ partial stages held the turn, below;
  // looped back on one H200 at TP = 4's shapes over 4 shards, 1-7% faster than through the ring).
  auto ring_partials = [&](int shard) { return !kSumC && summed(shard); };
  auto tile_stages = [&](int shard) { return kblocks + (ring_partials(shard) ? 2 * peers : 0); };  // its ring positions
  // Unit u -> its halves' shards and first rows, its rows (160, or 128 past the shard's tall
  // tiles; schedule::t_unit_tile) and this CTA's first column.
  auto tile = [&](int u, schedule::TTile& t, int& n0) {
    t = schedule::t_unit_tile(u, args.shards.rows, per, units_n, args.shards.count, args.shards.first, args.group_m, args.tall, strad);
    n0 = (t.un * kCluster + static_cast<int>(crank)) * kTC;
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kCluster);  // one arrival per CTA of the cluster (its consumer of the stage's tile)
    }
    *gate = 0;
    *straddled = 0;
    mbar_init(&pbar[0], 1);
    mbar_init(&pbar[1], 1);
    for (int i = 0; i < 2; ++i) {
      mbar_init(&ufull[i], 1);
      mbar_init(&uempty[i], 1);
    }
    *ended = 0;
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync();

  if (wg == 0) {
    // (The fused sum's producer, with its partials' waits and loads, spilled at 40 registers.)
    // (The dynamic schedule's producer spilled at 40 too, until its state and its next tile's words
    // went to shared memory, session 69. What the producers give up is what the consumers take:
    // the sum stays within the 168 x 384 registers the launch holds, or a consumer's
    // setmaxnreg.inc waits for ever, as 48 + 232 did, session 68.)
    if (kSum)
      asm volatile("setmaxnreg.dec.sync.aligned.u32 56;\n" ::: "memory");
    else
      asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      uint64_t landed = 0;  // shards whose signal this thread has seen
      int summable = 0;     // the fused sum: the row groups 0 .. summable - 1 have landed from every peer
      // The dynamic schedule: CTA 0 takes the units of this cluster's tiles after the first from the
      // counter (the units after the first wave, in the raster's order: clusters that finish a tile
      // at the same time take neighbours, which share B's columns, and their loads of them meet in
      // the L2 request coalescer), each a tile ahead: tile j + 1's is taken as tile j starts and
      // handed to CTA 1 after tile j's second k-block's loads (through CTA 1's slot (j + 1) % 2:
      // full, ufull there; read, uempty here), so that neither the atomic's round trip nor the
      // handoff holds a tile's first loads back (taken as each tile started, it made the GEMM 2-5%
      // slower than the static walk at 16384 rows: session 68, 1 x H200). The cluster that takes a
      // unit past the last counts itself out, and the last to do so zeroes both words for the next
      // launch: every cluster has then taken its last unit. (Every cluster has a first unit: the
      // launch runs min(clusters, units).) Why it completes for any cluster and unit count, every
      // unit once, the counter zero again, and no parity wait on a wrong fill: each handoff waits
      // only for CTA 1's read of the one two tiles back, which CTA 1 makes at the top of a tile
      // whose loads CTA 0's own loads wait for (the multicast halves); the consumers' turns order
      // every position's wait as the static walk's do, and the end marker hands the turn on. Host
      // model: HopperDynModel.* (tests/host/test_hopper_dyn_model.cpp, with controls).
      if (dyn && crank == 0) sts_u32(&pstate[0], atomicAdd(args.sched, 1u));  // ("ahead": tile 1's counter value)
      auto hand_on = [&](int j) {  // CTA 0, during tile j - 1's loads: tile j's unit
        const int slot = j & 1;
        const uint32_t n = static_cast<uint32_t>(j - 1) >> 1;  // the slot's earlier handoffs (tiles 1, 3, ... and 2, 4, ...)
        const int v = static_cast<int>(lds_u32(&pstate[0])) + unit_step;
        if (v < units) sts_u32(&pstate[0], atomicAdd(args.sched, 1u));  // (tile j + 1's)
        if (n > 0) mbar_wait(&uempty[slot], (n - 1) & 1);
        st_cluster_u32(&uslot[slot], 1, static_cast<uint32_t>(v));
        bar_arrive_cluster_release(&ufull[slot], 1);
        if (v >= units && atomicAdd(args.sched + 1, 1u) == static_cast<unsigned>(unit_step) - 1) {
          atomicExch(args.sched, 0u);
          atomicExch(args.sched + 1, 0u);
        }
        sts_u32(&pstate[1], static_cast<uint32_t>(v));  // (the unit take(j) returns in CTA 0)
      };
      auto take = [&](int j) {  // tile j's unit (j >= 1)
        if (crank == 0) return static_cast<int>(lds_u32(&pstate[1]));
        const int slot = j & 1;
        const uint32_t n = static_cast<uint32_t>(j - 1) >> 1;
        mbar_wait<device::MbarScope::kCluster>(&ufull[slot], n & 1);
        const int v = static_cast<int>(lds_u32(&uslot[slot]));
        bar_arrive_cluster_release(&uempty[slot], 0);
        return v;
      };
      const int hand_at = kblocks > 1 ? 1 : 0;  // (the k-block after whose loads CTA 0 hands the next unit on)
      for (int j = 0, u = first_unit;; ++j) {
        if (j > 0) u = dyn ? take(j) : u + unit_step;
        if (u >= units) {
          if (dyn) {  // kEndOfTiles in the next position's tile word, its phase completed without bytes
            mbar_wait(&empty[stage], phase ^ 1);
            sts_u32(&tile_word[8 * stage], kEndOfTiles);
            bar_arrive(&full[stage]);
          }
          break;
        }
        schedule::TTile t;
        int n0;
        tile(u, t, n0);
        if (dyn) {  // (the tile's words kept here until its first stage is free, not in registers)
          sts_u32(pend, static_cast<uint32_t>(u));
          sts_u32(pend + 1, static_cast<uint32_t>(t.shard));
          sts_u32(pend + 2, static_cast<uint32_t>(t.row));
          sts_u32(pend + 3, static_cast<uint32_t>(t.shard1));
          sts_u32(pend + 4, static_cast<uint32_t>(t.row1));
          sts_u32(pend + 5, static_cast<uint32_t>(t.height));
          sts_u32(pend + 6, static_cast<uint32_t>(t.un));
          sts_u32(pend + 7, t.straddle ? 1u : 0u);
        }
        const int shard = t.shard, row = t.row, height = t.height;
        const bool local = shard == args.shards.first;
        if (!local && args.shards.wait && !(landed >> shard & 1)) {
          // As hopper_gemm's: bounded (a timeout is recorded for the host to raise; the tile then
          // computes on what is there); the acquire orders the landed rows for this thread, the
          // proxy fence for its TMA loads. Each CTA of the cluster waits before loading its half.
          hopper_wait_signal(args.shards, shard, args.shards.target, shard);
          device::fence_proxy_async_global();
          landed |= uint64_t(1) << shard;
        }
        const CUtensorMap* ma = local && args.has_local ? &map_local : &map_a;
        const int az = local && args.has_local ? 0 : crank != 0 ? t.shard1 : shard;  // (this CTA's half of the rows)
        const int ar = crank != 0 ? t.row1 : row;
        // (A 128-row tile loads 160 rows all the same: rows 128-159 are the next tile's, or past the
        // shard's last row and filled with zeros by the map; its wgmma reads the first 128.)
        for (int kb = 0; kb < kblocks; ++kb) {
          mbar_wait(&empty[stage], phase ^ 1);
          if (dyn && kb == 0) {  // (the tile for its consumer, before the arrival)
#pragma unroll
            for (int i = 0; i < 8; ++i) sts_u32(&tile_word[8 * stage + i], lds_u32(pend + i));
          }
          mbar_expect_tx(&full[stage], kABytes + kBBytes);  // both CTAs' A halves, this CTA's B boxes
          tma_load_multicast_3d(sa + stage * kABytes + crank * kAHalf, ma, kb * kBK, ar, az, &full[stage], 0x3);
#pragma unroll
          for (int i = 0; i < 2; ++i) tma_load(sb + stage * kBBytes + i * kBBox, &map_b, n0 + i * 64, kb * kBK, &full[stage]);
          if (dyn && crank == 0 && kb == hand_at) hand_on(j + 1);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
        if (kSum && ring_partials(shard)) {  // (never the straddle: kSumC)
          // After the tile's k-loop loads (which never wait): every peer's partial of the row groups
          // the tile overlaps must have landed (signal slot p >= the last one's g + 1, bounded, as
          // hopper_gemm's fused form), then each partial's 160 x 128 goes through two stages, 80
          // rows each, as two 64-column boxes in A's area (a 128-row tile's consumer adds the first
          // 128). Not multicast (the cluster's CTAs hold other columns; both take the same stages).
          const int g_last = (min(row + height, args.shards.rows) - 1) / group_rows;
          if (g_last >= summable) {
            for (int j = 1; j <= peers; ++j) {
              const int p = hopper_partial_slot(args.shards, shard, j);
              hopper_wait_signal(args.shards, p, static_cast<uint64_t>(g_last) + 1, p);
            }
            device::fence_proxy_async_global();
            summable = g_last + 1;
          }
          for (int j = 1; j <= peers; ++j) {
            const int p = hopper_partial_slot(args.shards, shard, j);
            for (int h = 0; h < 2; ++h) {
              mbar_wait(&empty[stage], phase ^ 1);
              mbar_expect_tx(&full[stage], 2 * kPartBox);
#pragma unroll
              for (int i = 0; i < 2; ++i) tma_load_3d(sa + stage * kABytes + i * kPartBox, &map_part, n0 + i * 64, row + h * (kTR / 2), p, &full[stage]);
              if (++stage == kStages) {
                stage = 0;
                phase ^= 1;
              }
            }
          }
        }
      }
    } else if (threadIdx.x == 32 && kSum && args.shards.credits) {  // (after the producer: none of its values live here)
      open_gate(args.shards.handle, gate);
    } else if (strad > 0 && threadIdx.x >= 64) {
      // The straddle's rows of sum_shard, by warps 2 and 3 (idle otherwise): this cluster's
      // straddle tiles (units u < units_n, the first ones it runs; one, unless the clusters are
      // fewer than the column units) once its consumers have stored them whole into C and counted
      // them (the `straddled` count in shared memory reaching their number, each after
      // count_stored's wait for the stores and a GPU-scope fence: the two consumers may finish
      // them in either order), and once the peer's partial of those rows has landed (signal slot
      // p >= their row group + 1; bounded, a timeout recorded and what is there summed, as the
      // consumers' waits): scale x (C's rows + the partial), rounded once, into out. Both waits
      // sleep a microsecond or more between polls, the signal's with relaxed loads and one acquire
      // fence (device::wait_until_quiet; session 62, 2 x H200: acquire polls at system scope every
      // microsecond from these warps made 8B mm+rs M 16384 ~4% slower, the straddle then losing
      // to no straddle by 2.5%). (C's rows of sum_shard are this rank's straddle's own: nothing
      // else writes them.) Nothing waits for these warps but the CTA's end, and they wait
      // for nothing that waits for them: the straddle tile waits for nothing (it is the first
      // tile its consumer takes, counted as a peer tile), and the peer's push of that row group
      // waits only for the peer's counts of its peer tiles, which never wait (rs_fused's
      // argument). The count in shared memory is set unconditionally after the tile's stores
      // (as the credit gate, pass_gate), so its spin ends.
      const int ht = threadIdx.x - 64, own = args.shards.sum_shard, rows = args.shards.rows;
      const int p = hopper_partial_slot(args.shards, own, 1), r_own = own == 0 ? rows - strad : 0;
      const uint32_t flag = static_cast<uint32_t>(__cvta_generic_to_shared(straddled));
      const __nv_bfloat16* part = static_cast<const __nv_bfloat16*>(args.shards.partials);
      __nv_bfloat16* out = static_cast<__nv_bfloat16*>(args.shards.out);
      const uint32_t mine = first_unit < units_n ? static_cast<uint32_t>((units_n - first_unit + unit_step - 1) / unit_step) : 0;
      if (mine > 0) {
        if (ht == 0) {
          uint32_t seen = 0;
          for (;;) {
            asm volatile("ld.acquire.cta.shared::cta.u32 %0, [%1];" : "=r"(seen) : "r"(flag) : "memory");
            if (seen >= mine) break;
            __nanosleep(1000);
          }
          device::wait_until_quiet(args.shards.handle, args.shards.handle.local_signals + p, Cmp::kGe,
                                   static_cast<uint64_t>((r_own + strad - 1) / group_rows) + 1, WaitKind::kSignal, p, 4000);
        }
        named_sync(5, 64);
      }
      for (int u = first_unit; u < units_n; u += unit_step) {
        const int n0 = (u * kCluster + static_cast<int>(crank)) * kTC;
        for (int v = ht; v < strad * (kTC / 8); v += 64) {
          const int r = r_own + v / (kTC / 8), col = n0 + (v % (kTC / 8)) * 8;
          if (col >= args.n) continue;
          const uint4 x = __ldcg(reinterpret_cast<const uint4*>(args.c + (static_cast<size_t>(own) * rows + r) * args.ldc + col));
          const uint4 y = __ldcg(reinterpret_cast<const uint4*>(part + (static_cast<size_t>(p) * rows + r) * args.n + col));
          const __nv_bfloat162* xa = reinterpret_cast<const __nv_bfloat162*>(&x);
          const __nv_bfloat162* ya = reinterpret_cast<const __nv_bfloat162*>(&y);
          uint4 z;
          __nv_bfloat162* za = reinterpret_cast<__nv_bfloat162*>(&z);
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float2 a = __bfloat1622float2(xa[e]), b = __bfloat1622float2(ya[e]);
            za[e] = __floats2bfloat162_rn((a.x + b.x) * args.shards.scale, (a.y + b.y) * args.shards.scale);
          }
          *reinterpret_cast<uint4*>(out + static_cast<size_t>(r) * args.n + col) = z;
        }
      }
    }
  } else {
    if (kSum)  // (56 x 128 + 224 x 256 = 64512 = 168 x 384; 40 x 128 + 232 x 256 too)
      asm volatile("setmaxnreg.inc.sync.aligned.u32 224;\n" ::: "memory");
    else
      asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    // Ping-pong: consumer cw runs this CTA's tiles j = cw, cw + 2, ... whole (160 rows x 128
    // columns: two m64n160 sets, 160 accumulators; a 128-row tile two m64n128 sets), so one
    // consumer's drain and epilogue run while the other's k-loop keeps the tensor cores busy. Tile
    // j's k-block kb is ring position j x kblocks + kb: stage (j x kblocks + kb) % kStages, fill
    // (j x kblocks + kb) / kStages of that stage. A consumer starts tile j's k-loop only once the
    // other has been through tile j - 1's (named barriers 3 and 4: a turn), so every earlier
    // position's `full` wait is done when it waits on one: a stage's barrier is then at most one
    // fill behind the one waited for, and the parity wait cannot take an older fill of the same
    // parity for it.
    const int cw = wg - 1;
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const bool leader = t == 0;
    uint8_t* my_c = sc + cw * kCBox;  // two 80 x 64 slots
    // Descriptors of stage 0 (wgmma's A: B's box, transposed; wgmma's B: A's 160 rows); a stage
    // adds its offset, the second box 8 KiB, a k16 step 2 KiB (A) or 32 bytes (B), all in the
    // 16-byte units of the address field (shared addresses stay below 2^18: no carry out of it).
    const uint32_t da0 = sw128_desc_lo(smem_addr(sb), kBBox), db0 = sw128_desc_lo(smem_addr(sa), 16);  // (SBO 1024: sw128_desc_1024)
    float acc0[80], acc1[80];  // C's columns 0-63 and 64-127 of the tile
    // One tile's k-loop (kTall: 160 rows, else 128), from ring position `stage`/`phase` on; frees
    // each stage one k-block late (wgmma.wait_group 1), the last one at its end. The k-blocks from
    // the first at stage 0 on go in whole rounds of the ring, unrolled, so that each one's stage,
    // barrier and descriptor offsets are constants (SYMMEM_HGEMM_T_ROLLED: one loop, the stage a
    // variable, as until session 58).
    auto k_loop = [&](auto tall_tag, int& stage, uint32_t& phase) {
      constexpr bool kTall = decltype(tall_tag)::value;
      int prev = -1;
      auto kblock = [&](int kb, int st, uint32_t ph) {
        mbar_wait(&full[st], ph);
        const uint32_t da = da0 + st * (kBBytes >> 4), db = db0 + st * (kABytes >> 4);
        wgmma_fence();
        wgmma_keep(acc0);
        wgmma_keep(acc1);
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk) {
          if constexpr (kTall)
            wgmma_m64n160k16_ta(acc0, sw128_desc_1024(da + kk * (2048 >> 4)), sw128_desc_1024(db + kk * (32 >> 4)), (kb | kk) != 0 ? 1 : 0);
          else
            wgmma_m64n128k16_ta(acc0, sw128_desc_1024(da + kk * (2048 >> 4)), sw128_desc_1024(db + kk * (32 >> 4)), (kb | kk) != 0 ? 1 : 0);
        }
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk) {
          if constexpr (kTall)
            wgmma_m64n160k16_ta(acc1, sw128_desc_1024(da + (kBBox >> 4) + kk * (2048 >> 4)), sw128_desc_1024(db + kk * (32 >> 4)), (kb | kk) != 0 ? 1 : 0);
          else
            wgmma_m64n128k16_ta(acc1, sw128_desc_1024(da + (kBBox >> 4) + kk * (2048 >> 4)), sw128_desc_1024(db + kk * (32 >> 4)), (kb | kk) != 0 ? 1 : 0);
        }
        wgmma_commit();
        wgmma_keep(acc0);
        wgmma_keep(acc1);
        wgmma_wait<1>();
        wgmma_keep(acc0);
        wgmma_keep(acc1);
        if (leader) release<kCluster>(empty, prev);
        prev = st;
      };
      auto advance = [&] {
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      };
      int kb = 0;
#ifndef SYMMEM_HGEMM_T_ROLLED
      for (; kb < kblocks && stage != 0; ++kb, advance()) kblock(kb, stage, phase);
      for (; kb + kStages <= kblocks; kb += kStages) {  // (stage 0 here; the round ends at stage 0 again)
#pragma unroll
        for (int s = 0; s < kStages; ++s) kblock(kb + s, s, phase);
        phase ^= 1;
      }
#endif
      for (; kb < kblocks; ++kb, advance()) kblock(kb, stage, phase);
      return prev;
    };
    // A partial's half e % 2 (80 rows; a 128-row tile's second: 48), two 64-column boxes at `at`,
    // added in fp32 to the accumulators.
    auto add_stage = [&](int e, bool tall, const uint8_t* at) {
      if (!(e & 1))
        add_partial_half<0>(acc0, acc1, at, warp, lane);
      else if (tall)
        add_partial_half<1>(acc0, acc1, at, warp, lane);
      else
        add_partial_half<1, 6>(acc0, acc1, at, warp, lane);
    };
    uint32_t pphase = 0;  // kSumC: the parity of this consumer's next partial load
    // (kSum: a tile's positions are its k-blocks and, summed, its partials' stages: both consumers
    // walk every tile to count them.)
    long pos = 0;
    constexpr int kWalk = kSum ? 1 : 2;
    for (int j = kSum ? 0 : cw, u = first_unit + (kSum ? 0 : cw * unit_step); dyn || u < units; j += kWalk, u += kWalk * unit_step) {
      if (dyn) {
        // The dynamic schedule: the turn first, then tile j's unit from its first position's tile
        // word (written before the producer's arrival there). kEndOfTiles: this consumer says so
        // in `ended` and hands the turn on, and the other, past that turn, ends too. (Every arrival
        // on a turn barrier meets a wait: each consumer hands the turn on after each k-loop and at
        // the end, and waits for it before each tile but its first and at the end.)
        if (j > 0) named_sync(cw == 0 ? 4 : 3, 256);
        if (lds_u32(ended) != 0) break;
        const long p0 = static_cast<long>(j) * kblocks;
        const int s0 = static_cast<int>(p0 % kStages);
        mbar_wait(&full[s0], static_cast<uint32_t>((p0 / kStages) & 1));
        const uint32_t w0 = lds_u32(&tile_word[8 * s0]);
        if (w0 == kEndOfTiles) {
          if (leader) sts_u32(ended, 1);  // (ordered before the arrival by it)
          named_arrive(cw == 0 ? 3 : 4, 256);
          break;
        }
        u = static_cast<int>(w0);
      }
      schedule::TTile t;
      int n0;
      if (dyn) {  // (decoded by the producer: no divisions between the turn and the k-loop)
        const uint32_t* w = &tile_word[8 * static_cast<int>((static_cast<long>(j) * kblocks) % kStages)];
        t.shard = static_cast<int>(lds_u32(w + 1));
        t.row = static_cast<int>(lds_u32(w + 2));
        t.shard1 = static_cast<int>(lds_u32(w + 3));
        t.row1 = static_cast<int>(lds_u32(w + 4));
        t.height = static_cast<int>(lds_u32(w + 5));
        t.un = static_cast<int>(lds_u32(w + 6));
        t.straddle = lds_u32(w + 7) != 0;
        n0 = (t.un * kCluster + static_cast<int>(crank)) * kTC;
      } else {
        tile(u, t, n0);
      }
      const int shard = t.shard, m0 = t.row, height = t.height;
      long pos0 = static_cast<long>(j) * kblocks;
      if (kSum) {
        pos0 = pos;
        pos += tile_stages(shard);
        if ((j & 1) != cw) continue;  // the other consumer's tile
      }
      const bool sum = summed(shard) && !t.straddle, tall = height == kTR;
      int stage = static_cast<int>(pos0 % kStages);
      uint32_t phase = static_cast<uint32_t>((pos0 / kStages) & 1);
      if (j > 0 && !dyn) named_sync(cw == 0 ? 4 : 3, 256);  // my turn: the other consumer is through tile j - 1's k-loop
      const int prev = tall ? k_loop(std::true_type{}, stage, phase) : k_loop(std::false_type{}, stage, phase);
      // The other's turn (tile j + 1), at once, before the drain. A summed tile's turn comes after
      // its partial stages' waits too, so that every position before the other's next one has been
      // waited for (the parity argument above counts every position). Where they fit in the ring
      // with the last k-block still held (2 x peers < kStages: 2 and 3 ranks), those waits come
      // first and the turn right after them, before the drain and the adds, which then run under
      // the other consumer's k-loop: position p + e (e < 2 x peers) needs p + e - 5 <= p - 2 freed,
      // which the k-loop did. (Releasing the partial stages after the turn only holds the producer
      // back; after the turn this consumer waits for nothing but its own warpgroup.) At 4 ranks
      // and more each partial stage is waited for, added and freed in turn, the turn after them.
      // (kSumC: the partials are not in the ring; the turn right after the k-loop, and the
      // consumer then waits for each peer's signal and loads that partial itself, below. Those
      // waits hold this consumer's next turn, never a count, at any number of shards: the summed
      // shard runs last in every CTA's walk (sum_shard = first + 1), so every tile after a summed
      // one is summed too and counts nothing, and a peer tile is counted after its stores, which
      // wait for no turn: every rank's peer tiles complete whatever its summed tiles wait for, so
      // every push, and with it every signal a summed tile waits for, comes. The raster only
      // orders tiles inside a shard (schedule::shard_unit), so this holds at any group_m; the host
      // model runs it at rasters 2 and 8.)
      const int partials = kSum && ring_partials(shard) ? 2 * peers : 0;
      const bool waited_first = partials > 0 && partials < kStages;
      if (waited_first) {
        int st = stage;
        uint32_t ph = phase;
        for (int e = 0; e < partials; ++e) {
          mbar_wait(&full[st], ph);
          if (++st == kStages) {
            st = 0;
            ph ^= 1;
          }
        }
      }
      if ((partials == 0 || waited_first) && (dyn || u + unit_step < units)) named_arrive(cw == 0 ? 3 : 4, 256);
      wgmma_wait<0>();
      wgmma_keep(acc0);
      wgmma_keep(acc1);
      if (leader) release<kCluster>(empty, prev);
      if (kSumC && sum) {
        // The peers' partials of the tile, one after another, each through this consumer's two C
        // slots (20 KiB: a partial's 80-row half as two 64-column boxes, the layout
        // add_partial_half reads), one half after the other, loaded by the leader once that
        // peer's signal covers the row groups the tile overlaps (bounded, as the producer's waits:
        // a timeout is recorded and the tile sums what is there) and once the slots' last stores
        // have been read; every thread's reads of a half before the next load overwrites it. All
        // of it after the turn: the other consumer's k-loop runs meanwhile on the whole ring.
        const uint64_t need = static_cast<uint64_t>((min(m0 + height, args.shards.rows) - 1) / group_rows) + 1;
        if (leader) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        for (int q = 1; q <= peers; ++q) {
          const int p = hopper_partial_slot(args.shards, shard, q);
          if (leader) {
            hopper_wait_signal(args.shards, p, need, p);
            device::fence_proxy_async_global();
          }
          for (int h = 0; h < 2; ++h) {
            if (leader) {
              device::fence_proxy_async_shared();  // (the slots' earlier reads and writes, before the load)
              mbar_expect_tx(&pbar[cw], 2 * kPartBox);
#pragma unroll
              for (int i = 0; i < 2; ++i) tma_load_3d(my_c + i * kPartBox, &map_part, n0 + i * 64, m0 + h * (kTR / 2), p, &pbar[cw]);
            }
            mbar_wait(&pbar[cw], pphase);
            pphase ^= 1;
            add_stage(h, tall, my_c);
            named_sync(1 + cw, 128);
          }
        }
      }
      if (kSum && sum) {
        // The peers' partials, 80 rows a stage, added in fp32.
        for (int e = 0; e < partials; ++e) {
          if (!waited_first) mbar_wait(&full[stage], phase);
          add_stage(e, tall, sa + stage * kABytes);
          named_sync(1 + cw, 128);  // every thread's reads of the stage, before the leader frees it
          if (leader) release<kCluster>(empty, stage);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
        if (partials > 0 && !waited_first && u + unit_step < units) named_arrive(cw == 0 ? 3 : 4, 256);  // (kSumC: turned above)
        if (args.shards.scale != 1.0f) {
#pragma unroll
          for (int i = 0; i < 80; ++i) {
            acc0[i] *= args.shards.scale;
            acc1[i] *= args.shards.scale;
          }
        }
      }
      // (Each half from its own row of its own shard; the straddle's second through map_c48, which
      // then maps shard 1's first `strad` rows only: the half's other rows are shard 1's first tile's.)
      const CUtensorMap* mo = sum ? &map_out : &map_c;
      const int oz = sum ? 0 : shard;
      const bool head = strad > 0 && t.straddle;
      const CUtensorMap* mo1 = head ? &map_c48 : mo;
      const int oz1 = head ? 0 : oz;
      store_half<0>(acc0, mo, my_c, warp, lane, leader, n0, m0, oz, 1 + cw);
      if (tall) {
        store_half<1>(acc0, mo1, my_c, warp, lane, leader, n0, t.row1, oz1, 1 + cw);
        store_half<0>(acc1, mo, my_c, warp, lane, leader, n0 + 64, m0, oz, 1 + cw);
        store_half<1>(acc1, mo1, my_c, warp, lane, leader, n0 + 64, t.row1, oz1, 1 + cw);
      } else {  // (rows 80-127 through the 48-row boxes: rows 128-159 are the next tile's)
        const CUtensorMap* mo48 = sum ? &map_out48 : &map_c48;
        store_half<1, 6>(acc0, mo48, my_c, warp, lane, leader, n0, t.row1, oz1, 1 + cw);
        store_half<0>(acc1, mo, my_c, warp, lane, leader, n0 + 64, m0, oz, 1 + cw);
        store_half<1, 6>(acc1, mo48, my_c, warp, lane, leader, n0 + 64, t.row1, oz1, 1 + cw);
      }
      if (kSum && args.shards.done != nullptr && !sum && leader) {
        // HopperRowShards::done (the fused sum): this CTA's tile counts once in every row group
        // it overlaps, once its four stores are complete (count_stored waits for them). Off the
        // tensor cores' path: the other consumer's k-loop runs meanwhile. The straddle counts
        // its rows of the peer shard (`first`), and then hands its rows of sum_shard to the
        // producer warpgroup's warps 2 and 3 (above).
        const int ps = t.straddle ? args.shards.first : shard;
        int r0, r1;
        schedule::t_tile_rows_in(t, ps, args.shards.rows, strad, r0, r1);
        for (int g = r0 / group_rows; g <= (r1 - 1) / group_rows; ++g) count_pushed(args.shards, ps * args.shards.groups + g, gate);
        if (strad > 0 && t.straddle) {
          __threadfence();
          asm volatile("red.release.cta.shared::cta.add.u32 [%0], 1;" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(straddled))) : "memory");
        }
      }
    }
    if (leader) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // before shared memory goes
  }
  // No CTA may leave while its cluster peer can still write its shared memory or arrive on its
  // barriers. (Not .aligned: the producer's thread 0 arrives here after the rest of its warp.)
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
  if (kSum && args.shards.finished != nullptr && threadIdx.x == 0) finish_counts(args.shards);
#endif
}

}  // namespace

namespace {
// The kernel's instantiations: plain, counted (kSum: also the fused sum with its partials in the
// stage ring, HopperRowShards::sum_in_ring), the fused sum with the partials through the C slots
// (kSumC), and the plain one with the dynamic schedule (HopperGemmOptions::tile_counter).
enum TKind { kTPlain = 0, kTCounted = 1, kTSumC = 2, kTPlainDyn = 3 };
TKind t_kind(const HopperRowShards* shards) {
  if (shards == nullptr || (shards->sum_shard < 0 && shards->done == nullptr)) return kTPlain;
  return shards->sum_shard >= 0 && !shards->sum_in_ring ? kTSumC : kTCounted;
}
decltype(&hopper_gemm_t_kernel<false, false>) t_kernel(TKind kind) {
  return kind == kTSumC      ? hopper_gemm_t_kernel<true, true>
         : kind == kTCounted ? hopper_gemm_t_kernel<true, false>
         : kind == kTPlainDyn ? hopper_gemm_t_kernel<false, false, true>
                              : hopper_gemm_t_kernel<false, false>;
}
// The clusters a launch of that kernel runs on this device: as many as fit, at most
// opt.max_ctas / 2 (each instantiation asks once: its shared-memory limit is raised then).
int t_clusters(const HopperGemmOptions& opt, TKind kind, int dev) {
  static ClusterFit<kCluster> fits[4];
  int clusters = fits[kind].get(t_kernel(kind), dev, kThreads, kSmemBytes, "hopper_gemm_t");
  if (opt.max_ctas > 0) clusters = std::max(1, std::min(clusters, opt.max_ctas / kCluster));
  return clusters;
}

// A schedule choice for a shape, worked out once (each walks every unit of its candidates, too much
// host time for every call): `what` 0 the tall count (schedule::t_choose_tall), 1 whether the
// straddle (schedule::t_choose_straddle).
int chosen_once(int what, int rows, int count, int n, int clusters, int group) {
  static std::mutex mu;
  static std::map<std::tuple<int, int, int, int, int, int>, int> chosen;
  const int units_n = (n + kTC * kCluster - 1) / (kTC * kCluster);
  const auto key = std::make_tuple(what, rows, count, units_n, clusters, group);
  std::lock_guard<std::mutex> lock(mu);
  auto it = chosen.find(key);
  if (it == chosen.end())
    it = chosen.emplace(key, what == 0 ? schedule::t_choose_tall(rows, count, units_n, clusters, group)
                                       : schedule::t_choose_straddle(rows, count, units_n, clusters, group) ? 1 : 0).first;
  return it->second;
}
int choose_tall(int rows, int count, int n, int clusters, int group) { return chosen_once(0, rows, count, n, clusters, group); }
}  // namespace

int hopper_t_tall(int64_t m, int64_t n, const HopperGemmOptions& opt, const HopperRowShards* shards) {
  const int count = shards != nullptr ? shards->count : 1, rows = shards != nullptr ? shards->rows : static_cast<int>(m);
  if (shards != nullptr && shards->straddle > 0) return rows / kTR;  // (every tile 160 rows)
  if (opt.t_tall >= 0) return schedule::t_tall(rows, opt.t_tall);
  int dev = 0;
  SYMMEM_CUDA_CHECK(cudaGetDevice(&dev));
  return choose_tall(rows, count, static_cast<int>(n), t_clusters(opt, t_kind(shards), dev), opt.group_m);
}

int hopper_t_straddle(int64_t /*m*/, int64_t n, const HopperGemmOptions& opt, const HopperRowShards& shards, int force) {
  const int rows = shards.rows, count = shards.count, straddle = schedule::t_straddle_rows(rows, count);
  if (force == 0 || shards.ring || t_kind(&shards) != kTSumC || straddle == 0) return 0;  // (kTSumC: the fused sum, partials in the C slots)
  if (force == 1) return straddle;
  int dev = 0;
  SYMMEM_CUDA_CHECK(cudaGetDevice(&dev));
  return chosen_once(1, rows, count, static_cast<int>(n), t_clusters(opt, kTSumC, dev), opt.group_m) != 0 ? straddle : 0;
}

void hopper_gemm_t(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc,
                   const HopperGemmOptions& opt, cudaStream_t stream, const HopperRowShards* shards) {
  if (m == 0 || n == 0) return;
  check_gemm_operands("hopper_gemm_t", m, n, k, a, lda, b, ldb, c, ldc, opt);
  TArgs args{static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), opt.group_m, HopperRowShards{}, false, 0,
             static_cast<const __nv_bfloat16*>(c), static_cast<int>(ldc), nullptr};
  args.shards.rows = static_cast<int>(m);
  args.shards.count = 1;
  if (shards != nullptr) {
    require(shards->count >= 1 && shards->count <= 64 && shards->rows > 0 && static_cast<int64_t>(shards->rows) * shards->count == m &&
                shards->first >= 0 && shards->first < shards->count,
            "hopper_gemm_t: row shards must be 1-64 blocks of rows covering m (got ", shards->count, " x ", shards->rows, " for m ", m,
            ", first ", shards->first, ")");
    require(shards->local == nullptr || (reinterpret_cast<uintptr_t>(shards->local) % 16 == 0 && shards->local_ld % 8 == 0 && shards->local_ld >= k),
            "hopper_gemm_t: the local shard must be 16-byte aligned, its leading dimension a multiple of 8 and at least k");
    require(shards->finished == nullptr || shards->done != nullptr, "hopper_gemm_t: row shards' finished word needs their done words");
    require(!shards->ring, "hopper_gemm_t: the epilogue ring is not supported; use hopper_gemm");
    require(shards->groups >= 1 && shards->rows % shards->groups == 0,
            "hopper_gemm_t: row groups must split a shard evenly (got ", shards->groups, " groups of a ", shards->rows, "-row shard)");
    if (shards->sum_shard >= 0) {
      require(shards->count >= 2 && shards->sum_shard == (shards->first + 1) % shards->count && shards->wait == 0 && shards->local == nullptr,
              "hopper_gemm_t: the fused sum's shard must be the one that runs last (first + 1), with at least 2 shards, no shard waits "
              "and no local shard");
      require(shards->partials != nullptr && shards->out != nullptr && reinterpret_cast<uintptr_t>(shards->partials) % 16 == 0 &&
                  reinterpret_cast<uintptr_t>(shards->out) % 16 == 0,
              "hopper_gemm_t: the fused sum needs 16-byte aligned partials and out");
    }
    require(shards->straddle == 0 || (shards->sum_shard >= 0 && shards->count == 2 && shards->done != nullptr && !shards->sum_in_ring &&
                                      shards->straddle == schedule::t_straddle_rows(shards->rows, shards->count)),
            "hopper_gemm_t: a straddle (", shards->straddle, " rows) needs the fused sum at 2 shards with done words, its partials not in the ring, and ",
            "schedule::t_straddle_rows's rows (", schedule::t_straddle_rows(shards->rows, shards->count), " for ", shards->rows, "-row shards)");
    args.shards = *shards;
    args.has_local = shards->local != nullptr;
  }
  int dev = 0;
  SYMMEM_CUDA_CHECK(cudaGetDevice(&dev));
  if (!hopper_gemm_supported(dev)) fail<Unsupported>("hopper_gemm_t: needs a Hopper GPU (compute capability 9.0)");
  const int count = args.shards.count, rows = args.shards.rows;
  const CUtensorMap ma = tensor_map_3d(a, count, rows, k, lda, kTR / 2, kBK, "A");
  const CUtensorMap mb = tensor_map(b, k, n, ldb, kBK, 64, "B");
  const CUtensorMap ml = args.has_local ? tensor_map_3d(args.shards.local, 1, rows, k, args.shards.local_ld, kTR / 2, kBK, "the local shard") : ma;
  const CUtensorMap mc = tensor_map_3d(c, count, rows, n, ldc, kTR / 2, 64, "C");
  // (With a straddle every tile is 160 rows, and map_c48 maps shard 1's first straddle rows: the
  // straddle's second half's, clipped there.)
  const CUtensorMap mc48 = args.shards.straddle > 0
                               ? tensor_map_3d(static_cast<const char*>(c) + static_cast<size_t>(rows) * ldc * 2, 1, args.shards.straddle, n, ldc, kTR / 2, 64, "C")
                               : tensor_map_3d(c, count, rows, n, ldc, kTR / 2 - 32, 64, "C");
  const bool sum = args.shards.sum_shard >= 0;
  const CUtensorMap mp = sum ? tensor_map_3d(args.shards.partials, count, rows, n, n, kTR / 2, 64, "the partials") : mc;
  const CUtensorMap mo = sum ? tensor_map_3d(args.shards.out, 1, rows, n, n, kTR / 2, 64, "the summed rows' output") : mc;
  const CUtensorMap mo48 = sum ? tensor_map_3d(args.shards.out, 1, rows, n, n, kTR / 2 - 32, 64, "the summed rows' output") : mc;
  require(opt.tile_counter == nullptr || reinterpret_cast<uintptr_t>(opt.tile_counter) % 8 == 0,
          "hopper_gemm_t: the tile counter must be 8-byte aligned device memory (two words, zero at the first launch)");
  const TKind kind = t_kind(&args.shards) == kTPlain && opt.tile_counter != nullptr ? kTPlainDyn : t_kind(&args.shards);
  int clusters = t_clusters(opt, kind, dev);
  args.sched = kind == kTPlainDyn ? opt.tile_counter : nullptr;
  const int strad = args.shards.straddle;
  args.tall = strad > 0             ? rows / kTR
              : opt.t_tall >= 0     ? schedule::t_tall(rows, opt.t_tall)
                                    : choose_tall(rows, count, static_cast<int>(n), clusters, opt.group_m);
  const int64_t units_n = (n + kTC * kCluster - 1) / (kTC * kCluster);
  const int64_t per = strad > 0 ? rows / kTR : schedule::t_row_tiles(rows, args.tall);
  const int64_t units = (static_cast<int64_t>(count) * per + (strad > 0 ? 1 : 0)) * units_n;
  clusters = static_cast<int>(std::min<int64_t>(clusters, units));
  ClusterLaunch<kCluster> l(clusters * kCluster, kThreads, kSmemBytes, stream);
  SYMMEM_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, t_kernel(kind), ma, mb, ml, mc, mc48, mp, mo, mo48, args));
}

uint64_t hopper_t_group_count(int64_t rows, int64_t group_rows, int64_t g, int64_t n, int tall, int straddle, int shard) {
  const int r = static_cast<int>(rows);
  tall = straddle > 0 ? r / kTR : schedule::t_tall(r, tall);
  const int64_t lo = g * group_rows, hi = std::min((g + 1) * group_rows, rows);  // the group's rows [lo, hi)
  // (The kernel's own tiles, schedule::t_unit_tile, one column unit: a row of tiles each.)
  const int per = straddle > 0 ? r / kTR : schedule::t_row_tiles(r, tall), count = straddle > 0 ? 2 : 1;
  int64_t tiles = 0;
  for (int u = 0; u < count * per + (straddle > 0 ? 1 : 0); ++u) {
    const schedule::TTile t = schedule::t_unit_tile(u, r, per, 1, count, 0, 1, tall, straddle);
    int r0 = 0, r1 = 0;
    schedule::t_tile_rows_in(t, straddle > 0 ? shard : t.shard, r, straddle, r0, r1);
    tiles += r0 < r1 && r0 < hi && lo < r1 ? 1 : 0;
  }
  return static_cast<uint64_t>(tiles) * kCluster * ((n + kTC * kCluster - 1) / (kTC * kCluster));
}

}  // namespace symmem::overlap
