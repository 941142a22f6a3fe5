#pragma once
// Internal: symmem's own bf16 GEMM for Hopper (sm_90a): TMA loads, wgmma, warp-specialised,
// persistent. Row-major C [m, n] = A [m, k] x B [k, n], fp32 accumulation. It exists for what
// cuBLASLt cannot do: a GEMM over all rows whose tiles start only when their rows have landed
// (the overlap's row shards), in an order the caller gives.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "symmem/device/handle.hpp"
#include "symmem/export.hpp"

namespace symmem::overlap {

struct HopperGemmOptions {
  int cluster = 2;   // CTAs a cluster (1 or 2): a pair shares B's tiles by TMA multicast
  int group_m = 8;   // tile raster: this many row blocks (units) before the next column block
  int max_ctas = 0;  // 0: one CTA an SM (as many clusters as fit)
  // With HopperRowShards::done: the k-block of a warpgroup's next tile after which its last tile's
  // stores are counted (their completion is waited for then; at or past the k-loop's end, after it).
  int count_at = 3;
  // Of each tile's two 128-column halves, how many go out under the next tile's first k-blocks
  // (one a k-block, while its wgmma run) instead of before it: 0, 1 or 2.
  int defer_halves = 2;
  // hopper_gemm_t only: a shard's tiles of 160 rows before its tiles of 128 (schedule::t_tall);
  // negative: as hopper_t_tall chooses.
  int t_tall = -1;
  // hopper_gemm_t without row shards' counts or sums only: two words of device memory, zero at
  // the first launch and left zero by every launch, one pair per launch that may run at once; set,
  // the clusters take their tiles after the first from an atomic counter in the raster's order
  // (hopper_gemm_t.cu: a dynamic schedule), null: every clusters-th tile, as ever.
  unsigned* tile_counter = nullptr;
};

/// A itself is `count` shards of `rows` rows. The tiles run shard `first` first, then first - 1,
/// first - 2, ... (mod count). Where `wait`, the producer of a tile of shard p != first waits
/// (bounded, through `handle`: a timeout is recorded in its error record) for this rank's signal
/// slot p to reach `target`. Where `local` is set, shard `first`'s rows are read from it (local_ld
/// elements a row) instead of from A. Where `done` is set (`count` words, zero at the launch), each
/// consumer warpgroup adds 1 to done[p] for each of its half tiles of shard p once that half's
/// stores to C are complete (the add has release semantics at GPU scope): shard p's rows of C
/// are final when done[p] reaches hopper_shard_halves(rows, n). The add comes a few
/// k-blocks (HopperGemmOptions::count_at, and after both halves' stores were issued: with
/// defer_halves 2, under the next tile's k-blocks 0 and 1) into the warpgroup's next tile (the
/// stores are then long done, so nothing stalls), or after its k-loop if that is shorter, or after
/// the warpgroup's last tile. Without shard waits (`wait` 0, as the fused sum has) the next tile's
/// k-loop waits for nothing but the producer's loads, so a tile's stores and count come whatever
/// the other ranks do.
///
/// Row groups (`groups` > 1): each shard is `groups` runs of rows / groups rows (a multiple of 128
/// x the cluster), and a shard's tiles run group by group; done then has count x groups words,
/// done[p x groups + g] counting group g of shard p, which is in C at hopper_shard_halves(rows /
/// groups, n).
///
/// The fused sum (matmul_reduce_scatter; `sum_shard` >= 0, the shard that runs last, i.e. first + 1
/// mod count): its tiles add, in fp32 after their k-loop, the count - 1 partials of their rows that
/// the other ranks have pushed into `partials` (count slots of rows x n elements, ld n; slot p from
/// rank p; this rank's own slot is not read), each once this rank's signal slot p (through
/// `handle`; bounded) has reached g + 1 for the tile's row group g. The producer loads each partial
/// by TMA into the stage ring after the tile's k-blocks (and waits for the signals only then).
/// Those tiles store `scale` x the sum into `out` (rows x n, ld n) instead of C, and are not counted
/// in done.
///
/// `sum_in_ring` (hopper_gemm_t's fused sum only; for measurements): its partials go through the
/// stage ring after the tile's k-blocks, as hopper_gemm's, instead of through the summing
/// consumer's C slots after its turn (hopper_gemm_t.cu, kSumC; no straddle then).
///
/// `finished` (with `done`; one word, zero at the launch, left zero): the grid's last CTA to end
/// sets every done word (count x groups) to kHopperDoneAll, past any count's target, so that
/// nothing waiting on them (matmul_reduce_scatter's pushes) waits past the GEMM's end.
///
/// `credits` (with `done` and `finished`; `handle` is the TensorParallel's recv, credits.cuh): no
/// tile is counted before every peer's credit slot has reached this rank's epoch (bounded), and
/// the grid's last CTA ends the recv call (zeroes signal slots [0, count), counts the epoch, hands
/// the peers their credits): what lets the fused forms start without a barrier.
///
/// The ring (`ring`, with `sum_shard` as above): every shard but `first` adds one partial after its
/// k-loop, the one in `partials`' slot of that shard (rows shard x rows ..), once this rank's
/// signal slot of that shard (through `handle`; bounded) has reached g + 1 for the tile's row group
/// g; every shard but sum_shard goes to C and is counted in done, sum_shard's tiles store scale x
/// the sum into `out`.
///
/// `straddle` (hopper_gemm_t's fused sum at 2 shards only: schedule::t_straddle_rows(rows, 2), or
/// 0): one row of tiles holds shard 0's last `straddle` rows and shard 1's first (schedule::
/// t_unit_tile), so that every tile is 160 rows. It is stored into C whole and counted in the peer
/// shard's row groups; its rows of sum_shard are summed apart, by the producer warpgroup's idle
/// warps of the CTA that computed them, once the peer's partial of their row group has landed:
/// scale x (C's rows + the partial) into `out`, before the kernel ends (hopper_gemm_t.cu).
struct HopperRowShards {
  int rows = 0, count = 0, first = 0;
  int wait = 0;
  uint64_t target = 1;
  DeviceHandle handle{};
  const void* local = nullptr;
  int64_t local_ld = 0;
  unsigned long long* done = nullptr;
  unsigned long long* finished = nullptr;
  int groups = 1;
  int sum_shard = -1;
  const void* partials = nullptr;
  void* out = nullptr;
  float scale = 1.0f;
  bool ring = false;
  bool credits = false;
  int straddle = 0;
  bool sum_in_ring = false;
  // How the GEMM's producers and summing consumers wait for signals while the tensor cores run
  // beside them: 0, acquire polls back to back (the default); otherwise relaxed polls this many ns
  // apart and one acquire fence once the value is seen (device::wait_until_quiet; session 62 found
  // acquire polls at system scope costly where a wait lasts: each invalidates the SM's L1).
  unsigned quiet_ns = 0;
};

/// What HopperRowShards::finished leaves in every done word.
constexpr unsigned long long kHopperDoneAll = 1ull << 62;

/// The signal and partials' slot of the j-th partial (j = 1 .. count - 1, or 1 in the ring) that a
/// tile of `shard` adds: the fused sum's peer shard + j, the ring's `shard` itself.
SYMMEM_HOST_DEVICE inline int hopper_partial_slot(const HopperRowShards& s, int shard, int j) { return s.ring ? shard : (shard + j) % s.count; }

/// What done[p] of HopperRowShards reaches once shard p (`rows` rows, n columns) is in C (with row
/// groups: once a group of `rows` rows is).
constexpr uint64_t hopper_shard_halves(int64_t rows, int64_t n) { return static_cast<uint64_t>(rows / 128) * ((n + 255) / 256) * 2; }

/// Whether `device` runs the kernel (compute capability 9.0: the image is sm_90a only).
SYMMEM_API bool hopper_gemm_supported(int device);
/// The checks both own GEMMs make of their operands, each failure an InvalidArgument naming `who`:
/// m, n, k positive and below 2^31; n and the leading dimensions multiples of 8 elements, lda >= k,
/// ldb >= n, ldc >= n; A, B and C 16-byte aligned; opt.group_m positive.
void check_gemm_operands(const char* who, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb,
                         const void* c, int64_t ldc, const HopperGemmOptions& opt);

/// C = A x B (bf16 row-major; lda, ldb, ldc in elements, multiples of 8; pointers 16-byte aligned;
/// n a multiple of 8). Throws InvalidArgument on a bad shape, Unsupported off Hopper.
SYMMEM_API void hopper_gemm(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, void* c,
                            int64_t ldc, const HopperGemmOptions& opt, cudaStream_t stream, const HopperRowShards* shards = nullptr);

/// The same product computed as C^T = B^T A^T in tiles of 160 rows x 128 columns (cuBLASLt's
/// fastest plan at 16384 rows on an H200), ping-pong consumers, clusters of two along the columns
/// (hopper_gemm_t.cu). With `shards`: all_gather_matmul's (waits, a local shard), rows need not be
/// a multiple of anything, a shard's last tile is clipped at its last row; and the fused sum with
/// `done` counts but not the ring: each CTA's tile (160 or 128 rows x 128 columns) adds 1 to
/// done[p x groups + g] for every row group g of shard p that it overlaps, once its stores are
/// complete, so group g is in C when its word reaches
/// hopper_t_group_count(rows, rows / groups, g, n, hopper_t_tall(...)). A shard's row tiles are
/// hopper_t_tall(...) of 160 rows, then tiles of 128. Of opt, group_m, max_ctas and t_tall apply.
SYMMEM_API void hopper_gemm_t(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, void* c,
                              int64_t ldc, const HopperGemmOptions& opt, cudaStream_t stream, const HopperRowShards* shards = nullptr);
/// The 160-row tiles a shard that hopper_gemm_t runs with these arguments before its 128-row ones
/// (opt.t_tall, or schedule::t_choose_tall for this device's clusters: the shortest walk).
SYMMEM_API int hopper_t_tall(int64_t m, int64_t n, const HopperGemmOptions& opt, const HopperRowShards* shards = nullptr);
/// What hopper_gemm_t's done word of row group g (group_rows rows of a `rows`-row shard) reaches
/// once the group is in C (n columns): its overlapping row tiles (`tall` of 160 rows, then 128;
/// with a straddle, HopperRowShards::straddle, shard `shard`'s whole tiles and its straddle half)
/// x the CTAs a row of tiles.
SYMMEM_API uint64_t hopper_t_group_count(int64_t rows, int64_t group_rows, int64_t g, int64_t n, int tall, int straddle = 0, int shard = 0);
/// The straddle hopper_gemm_t's fused sum at 2 shards takes on this device
/// (HopperRowShards::straddle: schedule::t_choose_straddle for its clusters), or 0. `force`: 1
/// takes it wherever it applies, 0 never, -1 as the model says.
SYMMEM_API int hopper_t_straddle(int64_t m, int64_t n, const HopperGemmOptions& opt, const HopperRowShards& shards, int force = -1);

}  // namespace symmem::overlap
