#pragma once
// Tensor-parallel GEMMs with their communication hidden (bf16 or fp16, row-major, fp32
// accumulation; the fused and own-GEMM forms below run bf16 only, fp16 takes the cuBLASLt forms):
//   all_gather_matmul:      C [M, Nc] = all_gather(A_shard) [M, K] x B [K, Nc]
//   matmul_reduce_scatter:  C_shard [M/N, Nc] = this rank's rows of sum over ranks (A [M, K] x B [K, Nc])
//
// Overlap, all-gather: after a barrier, each rank's shard goes to every peer by the copy engine
// (one put with a signal per peer, on a side stream, nearest peer first) while the GEMM of the
// local rows runs; each peer's rows are multiplied as soon as their signal has arrived, on a
// second, high-priority stream, so that the local rows' GEMM fills the SMs those leave idle. On
// Hopper with a GPU a rank (detail::gather_own_gemm), one persistent GEMM of symmem's own over all
// rows instead, each tile waiting for its shard's signal; in 160 x 128 tiles where
// detail::gather_transposed says (kOwnGatherT), else 128 x 256.
// Overlap, reduce-scatter, where a block's parts fill the GPU (detail::rs_ring; always at 2 ranks):
// after a barrier, a ring of N steps: at step t a rank multiplies the rows of block me + t + 1,
// adds (in the GEMM's epilogue) the partial sum of that block that rank me + 1 computed at step
// t - 1, and the copy engine carries the result to rank me - 1 with a signal while the next GEMM
// runs; the last step is the rank's own block, written to C_shard. Each step goes in a few parts
// (detail::rs_chunks) so that the copies hide under the GEMMs. Otherwise: the GEMM of each peer's
// rows (ring order) into local staging, carried by the copy engine to that peer's landing slot with
// a signal while the next GEMM runs; the local rows last; then one kernel sums the N slots (fp32).
// Fused (Hopper, detail::reduce_own_gemm: long K, and large blocks at 2 ranks; or
// SYMMEM_OVERLAP_GEMM=own): one persistent GEMM of symmem's own, the peers' blocks first, each row
// group's copy started when the GEMM has counted its tiles stored, and the own block last, its
// tiles adding the landed partials in fp32 before their one rounding (no sum kernel); in 160 x 128
// tiles where detail::reduce_transposed says (kFusedT), else 128 x 256. No barrier before it: its
// copies to a peer wait (through the GEMM's counts) until that peer has ended its earlier calls,
// which every matmul_reduce_scatter call reports to the peers at its end. Its epilogue
// ring (SYMMEM_OVERLAP_OWN_RS=ring, opt-in, not yet timed at 3+ ranks): the same GEMM in the
// cuBLASLt ring's order, where every block but the first adds the partial that the previous rank
// computed for it, and goes on to the next rank, so the adds are spread over N - 1 blocks instead
// of N - 1 of them falling on the own block.
// Sequential (the fallback): symmem's all_gather then one GEMM; one GEMM then reduce_scatter.
// Both are stream-ordered and capturable in a CUDA graph; the choice (auto) is a function of M, K,
// Nc and the team size, which every rank shares.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "symmem/collectives.hpp"
#include "symmem/export.hpp"

namespace symmem::overlap {

enum class Mode : int { kAuto = 0, kOverlap, kSequential };
enum class Op : int { kAllGatherMatmul = 0, kMatmulReduceScatter };
/// How an operation runs (TensorParallel::form; the header's first comment describes each):
/// all_gather_matmul by the own GEMM over row shards or cuBLASLt's GEMMs a shard group at a time;
/// matmul_reduce_scatter fused into the own GEMM, as a ring of cuBLASLt GEMMs, as cuBLASLt GEMMs and
/// a sum kernel, or as a ring inside the own GEMM (kOwnRing, the epilogue ring); either one
/// sequentially (the collective, then or after one GEMM). kOwnGatherT / kFusedT: all_gather_matmul's
/// own form / matmul_reduce_scatter's fused form with the GEMM in transposed tiles of 160 (and 128)
/// rows x 128 columns (detail::gather_transposed / reduce_transposed).
enum class Form : int { kSequential = 0, kOwnGather, kCublasGather, kFused, kRing, kSum, kOwnRing, kOwnGatherT, kFusedT };
SYMMEM_API const char* form_name(Form f);

class SYMMEM_API TensorParallel {
 public:
  /// Collective over comm's team. Buffers are sized for M <= max_m (the full row count), K <=
  /// max_k and Nc <= max_n: a gathered A [max_m, max_k] and reduce-scatter landing slots
  /// [max_m, max_n], both bf16 and symmetric, a local staging area [max_m, max_n] bf16, and a
  /// 32 MiB cuBLASLt workspace. A CUDA graph that captured one of its calls uses those buffers:
  /// keep the object alive as long as the graph may replay (and make it outside any capture: the
  /// constructor is collective host work).
  TensorParallel(Communicator& comm, int64_t max_m, int64_t max_k, int64_t max_n);
  ~TensorParallel();
  TensorParallel(const TensorParallel&) = delete;
  TensorParallel& operator=(const TensorParallel&) = delete;

  /// a_shard: this rank's M/N rows [M/N, K] (any device memory); b: [K, Nc]; c: [M, Nc];
  /// a_out (may be null): receives the gathered A [M, K]. M must be a multiple of the team size.
  /// Every operand is of `dtype`: kBFloat16 or kFloat16.
  void all_gather_matmul(const void* a_shard, int64_t m, int64_t k, const void* b, int64_t n, void* c, void* a_out,
                         cudaStream_t stream, Mode mode = Mode::kAuto, DataType dtype = DataType::kBFloat16);
  /// a: [M, K]; b: [K, Nc]; c_shard: [M/N, Nc]; op: sum or avg; every operand of `dtype`
  /// (kBFloat16 or kFloat16).
  void matmul_reduce_scatter(const void* a, int64_t m, int64_t k, const void* b, int64_t n, void* c_shard, ReduceOp op,
                             cudaStream_t stream, Mode mode = Mode::kAuto, DataType dtype = DataType::kBFloat16);

  /// What auto runs for this operation and these sizes (the same on every rank).
  Mode choose(Op op, int64_t m, int64_t k, int64_t n) const;
  /// How a call with these arguments runs on this rank: the mode, the shape, the dtype, the GPUs
  /// and the SYMMEM_OVERLAP_* knobs decide (detail::choose_form). The same on every rank, except
  /// that all_gather_matmul's own GEMM is rank-local (a rank whose GPU cannot run it takes
  /// cuBLASLt's GEMMs: both forms move and signal the rows alike).
  Form form(Op op, int64_t m, int64_t k, int64_t n, Mode mode = Mode::kAuto, DataType dtype = DataType::kBFloat16) const;

 private:
  struct Impl;
  // all_gather_matmul's cuBLASLt GEMMs (the lane and the caller's stream), after its copies.
  void gather_gemms(const void* a_shard, int64_t m, int64_t k, const void* b, int64_t n, void* c, cudaStream_t s, DataType dtype);
  void rs_fused(const void* a, int64_t m, int64_t k, const void* b, int64_t n, void* c_shard, float scale, cudaStream_t s, bool ring,
                bool transposed);
  // Frees what the constructor made: from the destructor, and from the constructor where it throws.
  static void release(Impl& d, Communicator& comm);
  Communicator& comm_;
  std::unique_ptr<Impl> impl_;
};

namespace detail {
/// What auto runs (TensorParallel::choose): a function of the operation, the sizes and the team
/// size only, so every rank makes the same choice. Host-tested.
SYMMEM_API Mode choose_mode(Op op, int64_t m, int64_t k, int64_t n, int nranks);
/// all_gather_matmul's GEMMs of the peers' rows, in arrival order (step j brings peer me - j's
/// shard): how many consecutive steps each GEMM takes. Where a shard's GEMM has kGroupOutputs
/// outputs or more (rows x Nc; about a wave of 128 x 256 tiles on H100/H200), or any_size is set,
/// each GEMM takes every shard that a model says has landed when the GEMMs before it end (a
/// shard's copy over its GEMM's time is about 2000 / Nc, as in choose_mode), so that few GEMMs
/// run, each over several shards: one GEMM per shard pays a partial last wave of tiles per shard.
/// Below, one GEMM a shard: there the copies' fixed cost makes a group wait for its last shard
/// longer than the model says (4 x H200: 8B M 2048 108 against 117 us grouped, M 4096 180-184
/// against 189; 70B M 2048 329-331 against 351). Local to a rank (no rank depends on another's
/// grouping). Host-tested.
constexpr int64_t kGroupOutputs = int64_t{1} << 22;
SYMMEM_API std::vector<int> gather_groups(int nranks, int64_t n, int64_t rows, bool any_size = false);
/// matmul_reduce_scatter's ring: into how many parts (a signal each) each step's rows go, so that
/// a part's copy to the next rank hides under the parts after it (about 2000 / K of its GEMM's time
/// on H100/H200): at least 2, at most kMaxRsChunks and `rows`. A function of the shape only (every
/// rank must cut the same parts). `forced` > 0 (SYMMEM_OVERLAP_RS_CHUNKS, agreed across ranks):
/// that many parts instead, within the same bounds. Host-tested.
constexpr int kMaxRsChunks = 8;
SYMMEM_API int rs_chunks(int64_t rows, int64_t k, int forced = 0);
/// Whether matmul_reduce_scatter runs the ring (true) or the GEMMs and a sum kernel: the ring at 2
/// ranks, and where a part's GEMM has at least 2^23 outputs (~256 tiles of 128 x 256, two waves of
/// an H100/H200; measured on 4 x H200) and fewer than 2^24 (larger parts: the sum form, measured on
/// 4 x H100 and H200). A function of the shape and team size only. Host-tested.
SYMMEM_API bool rs_ring(int nranks, int64_t rows, int64_t n, int64_t k);
/// Whether all_gather_matmul's overlap runs as one persistent GEMM of symmem's own over all rows
/// (its tiles wait for their shard's signal) instead of cuBLASLt's GEMMs a shard group at a time,
/// where the GPU can run it (Hopper, a GPU to each rank) and unless SYMMEM_OVERLAP_GEMM says
/// otherwise: from shards of 1024 rows (at 2 ranks, of 2^23 outputs: rows x Nc). Measured on 2 x H200
/// (bench/results/*-h200x2-*-s29*, *-s31c5-*) and 4 x H200 (*-h200x4-*-s30c2-*: 3-10% faster from
/// 1024 rows; at 512 rows 8B lost 6%, 70B won 2%); 3 and 5-8 ranks follow the same rule
/// unmeasured. Rank-local: both forms move and signal the rows alike. Host-tested.
SYMMEM_API bool gather_own_gemm(int nranks, int64_t rows, int64_t n);
/// all_gather_matmul's own form: whether its GEMM runs in transposed tiles of 160 rows x 128
/// columns, a shard's last ones 128 rows where that shortens the walk (hopper_gemm_t: ping-pong
/// consumers; cuBLASLt's fastest plan at 16384 rows on an H200 is 160 x 128), rather than 128 x
/// 256 (hopper_gemm), on a GPU of `sms` SMs: where the rows the busiest cluster walks
/// (schedule::t_walk_rows) are at most 0.3% more than hopper_gemm's whole waves. Measured in the
/// operation at TP = 2 on 2 x H200 (session 58): 8B M 8192 1-2% and M 16384 3-5% faster with them,
/// 70B M 8192 0.6-2% faster, M 16384 level to 2.5% faster (all chosen; session 67: 8B M 8192 1.5%
/// slower where each call follows a near-idle millisecond, 3% faster at the cap); 3+ ranks follow
/// the model unmeasured. SYMMEM_OVERLAP_GEMM_T = 1 / 0 forces it. Rank-local (the GEMM reads the rows
/// the same way either way). Host-tested.
SYMMEM_API bool gather_transposed(int nranks, int64_t rows, int64_t n, int sms);
/// The same model for matmul_reduce_scatter's fused form (its raster, reduce_raster), except that
/// at 2 ranks with K < 10240 the transposed tiles from 8192 rows a rank and hopper_gemm's at 4096
/// and below, whatever the walks say: on 2 x H200 8B (K 7168) M 16384 4-7% ahead; M 8192 1% ahead
/// at the power cap, 3.8% behind where each call follows a near-idle millisecond (session 67:
/// the smaller mean over the two, so not chosen there); 70B (K 14336) M 16384
/// level within the benchmark's noise (its GEMM alone over the shards 2.8% faster; chosen; 0.7-1.3%
/// ahead at raster 8, session 64), M 8192 2.5-3.5% slower at raster 2 and level at 8 (session 64;
/// not chosen); and at 3+ ranks with blocks of 2048 rows or more, where the fused sum's partials
/// outside the stage ring (session 63) put the form looped back on one H200 2.5-9% ahead of
/// hopper_gemm's at TP = 4 and 8 (unmeasured in the operation). SYMMEM_OVERLAP_RS_GEMM_T = 1 / 0
/// forces it. Rank-local (the pushes, their groups and signals are the same either way).
/// Host-tested.
SYMMEM_API bool reduce_transposed(int nranks, int64_t rows, int64_t n, int64_t k, int sms);
/// The fused forms' raster (HopperGemmOptions::group_m): row groups' units, at most this many, at
/// a time; reduce_raster picks it by C's width.
constexpr int kReduceGroup = 2, kReduceGroupWide = 8;
/// kReduceGroupWide where C has 8192 columns or more (32 units of 256: at raster 2 a wave of ~66
/// clusters spans every column of two row units, so B streams whole from memory once per two row
/// units, ~12 GB over a 16384 x 8192 x 14336 GEMM against ~5 GB at 8), else kReduceGroup (fewer
/// rows a wave: a row group's tiles done, and its push started, sooner). On 2 x H200, session 64,
/// both GPUs at their 700 W cap (SM clock 1200-1440 MHz): 70B mm+rs M 16384 at TP = 2 at raster 8
/// 1.035 / 1.055x the GEMM alone against 1.046 / 1.092 at 2 (both ways round), M 8192 level; the
/// transposed GEMM looped back at M 16384 3-5% faster (hopper_gemm's level). At 8B (N 4096) 8
/// was 0.6-1% slower (session 59). hopper_gemm's fused and ring forms stay at kReduceGroup
/// (session 65: their raster is clipped to a shard's units, no longer a row group's, so
/// SYMMEM_OVERLAP_RS_RASTER reaches them), so this moves the transposed form only. A function of
/// the shape only; rank-local all the same.
constexpr int reduce_raster(int64_t n) { return n >= 8192 ? kReduceGroupWide : kReduceGroup; }
/// Whether matmul_reduce_scatter runs its fused form: one persistent GEMM of symmem's own over all
/// rows, the peers' blocks first, each row group's push started by the GEMM's count of its stored
/// tiles, and the own block last, its tiles adding the peers' landed partials before their
/// epilogue (no sum kernel). Where every rank's GPU can run it (Hopper, a GPU to each rank) and the
/// blocks are whole 256-row units; SYMMEM_OVERLAP_GEMM=own / cublas forces it on / off (alike on
/// every rank: the constructor refuses a mix). A function of the shape and team size: at 3 ranks
/// and more where K >= 6144 (at TP = 4 on H100 it won at K 7168, Llama-3 70B, by 1-2.5% and lost
/// at K 3584, 8B); at 2 ranks where K >= 6144 and a rank has 4096 rows or more (on 2 x H200 it won
/// at 70B, K 14336, M 8192 and 16384, by 2-4%, and since session 59 at 8B, K 7168, by 0-2% at M
/// 8192 and 2.6-4.5% at M 16384; it lost at 70B M 4096); and since session 63 at 3+ ranks where K
/// >= 3584, a rank has 2048 rows or more and the cuBLASLt form would be the sum form (!rs_ring):
/// 8B M 8192 at TP = 4, whose sum form measured 1.15-1.18x the GEMM alone and the fused form
/// looped back on one H200 1.01-1.02x (unmeasured in the operation). Host-tested.
SYMMEM_API bool reduce_own_gemm(int nranks, int64_t rows, int64_t n, int64_t k);
/// The fused form's row groups a block (rows a multiple of 256): its pushes and its own tiles'
/// waits go by row group, 512 rows each (256 where a block is an odd number of 256-row units).
/// A function of the shape only (every rank must cut the same groups). Host-tested.
SYMMEM_API int rs_groups(int64_t rows);
/// What decides an operation's form besides its arguments, fixed when the TensorParallel is made
/// (alike on every rank: its constructor agrees on them). own_ok: every rank can run symmem's own
/// GEMM for this operation (all_gather_matmul: this GPU and team allow it; matmul_reduce_scatter:
/// every rank's do, with the driver's stream memory operations). own_gemm: SYMMEM_OVERLAP_GEMM
/// (1 own, 0 cublas, -1 unset); force_rs: SYMMEM_OVERLAP_RS (1 ring, 0 sum, -1 unset); own_rs:
/// SYMMEM_OVERLAP_OWN_RS (1 ring, 0 fused, -1 unset), which takes that own-GEMM form wherever the
/// own GEMM fits and SYMMEM_OVERLAP_GEMM is not cublas. own_t: SYMMEM_OVERLAP_GEMM_T (1, 0, -1
/// unset: gather_transposed on `sms`, the SMs the own GEMM may hold); rs_t: SYMMEM_OVERLAP_RS_GEMM_T
/// (likewise, reduce_transposed).
struct FormFacts {
  int nranks = 1;
  bool own_ok = false;
  int own_gemm = -1;
  int force_rs = -1;
  int own_rs = -1;
  int own_t = -1;
  int rs_t = -1;
  int sms = 132;
};
/// The form a call takes (TensorParallel::form, and what the operations run): `mode` as asked
/// (kAuto: choose_mode). The own GEMM multiplies bf16 only, whole 256-row units, up to 64 ranks.
/// Host-tested.
SYMMEM_API Form choose_form(Op op, Mode mode, int64_t m, int64_t k, int64_t n, DataType dtype, const FormFacts& f);
}  // namespace detail

}  // namespace symmem::overlap
