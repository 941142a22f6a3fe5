// The overlap's choices (symmem/overlap.hpp, detail): whether a call overlaps at all
// (choose_mode), and in which form (choose_form: the own GEMM or cuBLASLt's, which tiles, the
// reduce-scatter's ring, sum or fused form), each a function of the shape, the team size and the
// facts fixed at construction, which every rank shares. Host-tested (tests/host/
// test_overlap_choice.cpp); overlap.cpp runs the forms.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "hopper_gemm.hpp"
#include "hopper_schedule.hpp"
#include "symmem/overlap.hpp"

namespace symmem::overlap {

namespace detail {
bool gather_own_gemm(int nranks, int64_t rows, int64_t n) {
  // (At 2 ranks a shard's GEMM under 2^23 outputs stays on cuBLASLt: 8B M 2048, 1024 x 7168, lost 5%
  // on random operands, 196-197 us against 187, session 31; level on constant ones.)
  return nranks >= 2 && rows >= 1024 && rows % 256 == 0 && (nranks > 2 || rows * n >= (int64_t{1} << 23));
}
Mode choose_mode(Op op, int64_t m, int64_t k, int64_t n, int N) {
  // Overlap splits the GEMM into N row blocks, which costs a little GEMM efficiency; it pays where
  // the communication it hides is a large enough part of the work. The part is (N-1)/N of the
  // moved bytes over the link rate, against the GEMM's flops over the tensor rate: about
  // (N-1)/N * 2000 / Nc for all-gather (A moves) and (N-1)/N * 2000 / K for reduce-scatter (C
  // moves) on H100/H200 (~700 TFLOP/s, ~350 GB/s). Measured at TP = 2
  // (bench/results/*-overlap.json): all-gather + GEMM lost to sequential only where that part is
  // under ~0.1 and the shards are small (70B, M = 2048: 7%); GEMM + reduce-scatter won at every
  // shape (its sequential path also pays a separate reduce-scatter). At TP = 4 overlap won at every
  // shape of both operations (0.71-0.94x the sequential path, *-h200x4-e699096-overlap.json).
  // Where all_gather_matmul's shards suit symmem's own GEMM (gather_own_gemm, a function of the
  // shape), overlap wins there too: 70B M 2048 at TP = 2 on 2 x H200 551-577 us against 603-626
  // sequential (sessions 29-31, constant operands, *-h200x2-*-s29c10-*, -s30c1-*, -s31c1-*; random
  // ones 725-727 against 770-820, -s31c5-*), and the cuBLASLt form that
  // runs off Hopper was level with sequential there since session 20 (596-627 against 602-630).
  (void)k;
  const int64_t rows = N > 0 ? m / N : 0;
  if (N <= 1 || rows < 128) return Mode::kSequential;
  if (op == Op::kMatmulReduceScatter) return Mode::kOverlap;
  const double part = (N - 1.0) / N * 2000.0 / static_cast<double>(n);
  return part >= 0.1 || rows >= 2048 || gather_own_gemm(N, rows, n) ? Mode::kOverlap : Mode::kSequential;
}
std::vector<int> gather_groups(int nranks, int64_t n, int64_t rows, bool any_size) {
  std::vector<int> groups;
  if (!any_size && rows * n < kGroupOutputs) return std::vector<int>(std::max(nranks - 1, 0), 1);
  const double rho = 2000.0 / static_cast<double>(std::max<int64_t>(n, 1));  // a shard's copy time, in block GEMMs
  double t = 1;  // the local rows' GEMM comes first
  for (int next = 1; next < nranks;) {
    const int last = std::max(next, std::min(nranks - 1, static_cast<int>(t / rho + 1e-9)));
    groups.push_back(last - next + 1);
    t = std::max(t, last * rho) + (last - next + 1);
    next = last + 1;
  }
  return groups;
}
// Time ~ the rows the busiest cluster walks, in units of 256 of C's columns: hopper_gemm's units
// are 256 x 256 (shards of whole units, whole waves of them), hopper_gemm_t's 160 x 256 or 128 x
// 256 (schedule::t_walk_rows with schedule::t_choose_tall's count; `group`: the raster it runs in).
// The transposed tiles where they walk no more than 0.3% longer. Fitted to session 58's
// measurements of both operations at TP = 2 (symmem-bench overlap on 2 x H200, hopper_gemm in one
// column and the transposed tiles in the other, both ways round; bench/results/
// *-h200x2-824fe38-s58c3-* with the transposed tiles in the alt column, *-b79888c-s58c5-* in the
// main one; the alt column read 1.5-2% faster than the main one for one form at 70B mm+rs M 16384,
// *-3377fcf-s58c6-*), model ratio / measured: all_gather_matmul 8B M 8192 0.996 / 1-2% faster, M
// 16384 0.983 / 3-5% faster, 70B M 8192 0.995 (24 tall tiles) / 0.6-2% faster, M 16384 1.000 / level
// to 2.5% faster; matmul_reduce_scatter's fused form 70B M 8192 1.005 / 0.5-2% slower, M 16384
// 0.988 / level within that bias (2.2% faster from the alt column; the GEMM alone over its shards
// 2.8% faster). (Session 57's rule, 160-row tiles alone and a 0.8% margin, took 8B M 16384 and
// 70B M 8192.)
static bool transposed_wins(int nranks, int64_t rows, int64_t n, int sms, int group) {
  static std::mutex mu;  // (worked out once a shape: the walk visits every unit of each candidate)
  static std::map<std::tuple<int, int64_t, int64_t, int, int>, bool> known;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(nranks, rows, n, sms, group);
  if (auto it = known.find(key); it != known.end()) return it->second;
  const int clusters = std::max(1, sms / 2), units_n = static_cast<int>((n + 255) / 256), r = static_cast<int>(rows);
  const int64_t own_rows = (nranks * (rows / 256) * units_n + clusters - 1) / clusters * 256;
  const int tall = schedule::t_choose_tall(r, nranks, units_n, clusters, group);
  const long t_rows = schedule::t_walk_rows(r, nranks, units_n, clusters, group, tall);
  return known[key] = static_cast<double>(t_rows) <= 1.003 * static_cast<double>(own_rows);
}
bool gather_transposed(int nranks, int64_t rows, int64_t n, int sms) {
  // (8B M 8192 at TP = 2, session 67, both ways round, twins 2, bench/results/*-s67c3-*: the
  // transposed tiles 0.985-0.997x the GEMM alone back to back at the power cap against hopper_gemm's
  // 1.020-1.030, and 1.053-1.058 against 1.037-1.040 where each replay follows a near-idle
  // millisecond: the smaller mean over the two duty cycles, as reduce_transposed chooses.)
  return transposed_wins(nranks, rows, n, sms, HopperGemmOptions{}.group_m);
}
bool reduce_transposed(int nranks, int64_t rows, int64_t n, int64_t k, int sms) {
  // At 2 ranks with K < 10240 the transposed tiles from 8192 rows a rank, whatever the walks say:
  // 8B (K 7168) M 16384 on 2 x H200 ahead of the cuBLASLt ring by 2.6-4.5% (session 59) and of
  // hopper_gemm's fused form by 4-7% both replayed back to back and after a near-idle millisecond
  // (session 67, bench/results/*-s67c3-*). At 4096 rows (M 8192) hopper_gemm's tiles, as the walks
  // say: the transposed ones were 0.9-1.3% ahead replayed back to back at the power cap (1.031 against
  // 1.040-1.044x the GEMM alone; session 59 1-1.2%), but 3.8% behind where each replay follows a
  // near-idle millisecond and the SMs run at ~1850 MHz (1.102 against 1.061-1.062x; looped back
  // without communication, 660 against 631 us, level at the cap), as in an engine's bursts between
  // host work and in the Python harness (1.08x, sessions 66-67): the smaller mean over the two duty
  // cycles (all_gather_matmul keeps the transposed tiles by the same rule, gather_transposed). Between,
  // the walks. With K 14336 (70B) the walks decide: at M 8192 hopper_gemm's tiles were 2.5-3.5%
  // ahead (raster 2; level since session 64's wide raster, reduce_raster: -0.5 to +0.8% in four pairs).
  if (nranks == 2 && k < 10240 && rows >= 8192) return true;
  if (nranks == 2 && k < 10240 && rows <= 4096) return false;
  // At 3 ranks and more with blocks of 2048 rows or more, the transposed tiles whatever the walks
  // say: since session 63 their fused sum adds the peers' partials outside the stage ring (kSumC),
  // and the fused forms looped back on one H200 (symmem-hgemm-probe HGEMM_RS=1, partials landed
  // beforehand; bench/results/*-s63c1-*, *-s63c2-*, *-s63c3-*), x cuBLASLt's whole GEMM, transposed
  // / 128 x 256: TP = 4 8B M 8192 1.011-1.017 / 1.041-1.042, M 16384 1.070-1.078 / 1.103-1.108,
  // 70B M 8192 1.010-1.025 / 1.037-1.044, M 16384 0.977-0.996 / 1.025-1.048; TP = 8 (8 shards) M
  // 16384 8B 1.173 / 1.195, 70B 1.044 / 1.131. Below 2048 rows the walks decide, as the loopback
  // agrees: TP = 4 M 2048 8B 1.253 / 1.092, 70B 1.126 / 1.025; M 4096 1.053 / 1.047 and 1.046 /
  // 1.025; TP = 8 M 8192 level (1.102 / 1.105, 1.097 / 1.103). Not yet measured in the operation
  // at 3+ ranks (no 4-GPU machine since session 45).
  if (nranks >= 3 && rows >= 2048) return true;
  return transposed_wins(nranks, rows, n, sms, reduce_raster(n));
}
bool reduce_own_gemm(int nranks, int64_t rows, int64_t n, int64_t k) {
  // Where K is long enough that the form's costs, which scale with the outputs (the counts, the
  // adds of the landed partials after the own tiles' k-loops, the last partials' landing), are a
  // small part of a tile's k-loop: at TP = 4 on 4 x H100 (session 37, bench/results/
  // *-h100x4-c419892-s37c3-*), each form timed as symmem-bench's first instance and as its second
  // (the second reads 0-64 us slower at 70B mm+rs even when the two are identical), the fused form
  // won every 70B shape (K 7168): M 2048 / 4096 / 8192 / 16384 averaged 384 / 768 / 1549 / 3058 us
  // against the default's 393 / 788 / 1565 / 3085 (the sum form, and the ring at M 8192), and lost
  // every 8B one (K 3584) by 10-24 us (M 8192 406 against 396). The threshold between the two
  // (6144) is not measured; 3 and 5-8 ranks follow it unmeasured. At 2 ranks the fused form's one
  // own block adds one partial, as the cuBLASLt ring's last step does, and it wins where K is long
  // and a rank's block large: 2 x H200, session 55 (bench/results/*-h200x2-96a4347-s55c4-*), six
  // runs, both orders: 70B (K 14336) M 16384 0.986-1.005 x the GEMM alone against the ring's
  // 1.014-1.035, M 8192 0.996-1.040 against 0.994-1.087 (the ring's spread); M 4096 1.032-1.038
  // against 1.021-1.032, and 8B (K 7168) M 8192 / 16384 1-2% behind (as at 8B in session 33).
  // Session 59 (2 x H200, both ways round, twice) took 8B (K 7168) in too: with the count writes
  // after the GEMM gone (HopperRowShards::finished; 21 us at M 8192, 44 us at M 16384) the fused
  // form in transposed tiles read 1.045-1.063x the GEMM alone at M 16384 against the ring's
  // 1.074-1.094, and 0-2% ahead of it at M 8192. So at 2 ranks: K >= 6144 as at 3+, and 4096+ rows.
  // Session 63 took in, at 3+ ranks, blocks of 2048 rows or more with K >= 3584 where the cuBLASLt
  // form would be the sum form (not rs_ring: parts under 2^23 outputs), i.e. 8B M 8192 at TP = 4:
  // there the sum form measured 1.15-1.18x the GEMM alone on 4 x H200 (sessions 31-32, random
  // operands) and the fused form in transposed tiles, its partials outside the stage ring, looped
  // back on one H200 (no communication; reduce_transposed's figures) 1.011-1.017x; session 37's
  // 10-24 us loss was hopper_gemm's fused form with a barrier and the count writes after its GEMM
  // (~20 us at M 8192), both gone since. Where the ring would run (8B M 16384: measured 1.06-1.12x,
  // the loopback 1.070-1.078) it stays. Not yet measured in the operation at 3+ ranks.
  if (nranks == 2) return k >= 6144 && rows >= 4096;
  if (nranks < 3) return false;
  return k >= 6144 || (k >= 3584 && rows >= 2048 && !rs_ring(nranks, rows, n, k));
}
int rs_groups(int64_t rows) {
  // Row groups of 512 rows (two 256-row units of the GEMM's clusters), or of 256 where a block is
  // an odd number of units: small enough that the last group's push (4-8 MiB at TP = 4, 8B / 70B,
  // ~12-25 us at the ~340 GB/s a copy reaches) lands while the GEMM still runs the own block.
  const int64_t units = std::max<int64_t>(1, rows / 256);
  return static_cast<int>(units % 2 == 0 ? units / 2 : units);
}
int rs_chunks(int64_t rows, int64_t k, int forced) {
  // A part's copy over its GEMM's time is about 2000 / K (as in choose_mode); the ring hides it
  // under the chunks - 1 parts that run before the part that needs it.
  const double rho = 2000.0 / static_cast<double>(std::max<int64_t>(k, 1));
  const int want = forced > 0 ? forced : std::max(2, static_cast<int>(std::ceil(rho - 1e-9)) + 1);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({static_cast<int64_t>(want), kMaxRsChunks, rows})));
}
bool rs_ring(int nranks, int64_t rows, int64_t n, int64_t k) {
  // The ring runs 2N GEMMs of a part each (or more parts, rs_chunks) where the sum form runs N of a
  // block, and a GEMM of half the rows costs more than half (4 x H200, 8B: 1024 rows 38.7 us, 40.2
  // adding C, against 72.6 for 2048; the ring's chain alone 305.6 us against 274 for the whole
  // GEMM). Against that it saves the sum kernel (N + 1 passes over the shard). Measured at 4 ranks
  // (bench/results/*-h200x4-*-overlap-rs-*.json): the ring won where a part has 2^23 outputs or more
  // (two waves of 128 x 256 tiles on 132 SMs: 8B M 16384 ~617 against ~646 us, 70B M 8192
  // 1150-1190 against ~1200), lost below (8B M 8192 340-343 against 325-327, M 2048 131-148
  // against 106) and tied at 70B M 4096 (583-592 against 588-590). At 2 ranks the ring is one
  // step of parts and one of adds, and always won (session 13).
  // Parts of 2^24 outputs or more take the sum form: at 70B M 16384 (2048 x 8192 parts) the ring
  // waits ~230 us beyond its GEMM chain on 4 x H100 (its GEMMs alone 2934 us; the operation
  // 3093-3318 against the sum form's 2995-3079 in twelve runs of symmem-bench and 3133-3139 against
  // 2980-2993 in the Python suite, session 36), and the two were level on 4 x H200 (session 31,
  // random operands: 3006-3058 against 3027-3093).
  if (nranks == 2) return true;
  const int64_t part = rows / rs_chunks(rows, k) * n;
  return part >= (int64_t{1} << 23) && part < (int64_t{1} << 24);
}
Form choose_form(Op op, Mode mode, int64_t m, int64_t k, int64_t n, DataType dtype, const FormFacts& f) {
  const int N = f.nranks;
  if (mode == Mode::kAuto) mode = choose_mode(op, m, k, n, N);
  if (mode == Mode::kSequential || N <= 1) return Form::kSequential;
  const int64_t rows = m / N;
  // The own GEMM multiplies bf16 only (fp16 takes cuBLASLt's forms, whatever SYMMEM_OVERLAP_GEMM
  // says), whole 256-row units, up to 64 ranks; SYMMEM_OVERLAP_GEMM forces it on or off where it fits.
  const bool own_fits = f.own_ok && dtype == DataType::kBFloat16 && rows % 256 == 0 && N <= 64;
  if (op == Op::kAllGatherMatmul) {
    if (!own_fits || !(f.own_gemm == 1 || (f.own_gemm < 0 && gather_own_gemm(N, rows, n)))) return Form::kCublasGather;
    return f.own_t == 1 || (f.own_t < 0 && gather_transposed(N, rows, n, f.sms)) ? Form::kOwnGatherT : Form::kOwnGather;
  }
  // SYMMEM_OVERLAP_OWN_RS=ring / fused: that own-GEMM form wherever the own GEMM fits and is not
  // turned off (the ring is opt-in: not yet timed at 3+ ranks, where it differs from the fused form).
  // The fused form's GEMM in transposed tiles where reduce_transposed says or SYMMEM_OVERLAP_RS_GEMM_T
  // forces it (rank-local: the pushes, their groups and signals are the same).
  const Form fused = f.rs_t == 1 || (f.rs_t < 0 && reduce_transposed(N, rows, n, k, f.sms)) ? Form::kFusedT : Form::kFused;
  if (own_fits && f.own_gemm != 0 && f.own_rs >= 0) return f.own_rs == 1 ? Form::kOwnRing : fused;
  if (own_fits && (f.own_gemm == 1 || (f.own_gemm < 0 && reduce_own_gemm(N, rows, n, k)))) return fused;
  // SYMMEM_OVERLAP_RS=ring / sum: that form wherever N > 2 (for measurements and tests).
  return N == 2 || (f.force_rs >= 0 ? f.force_rs == 1 : rs_ring(N, rows, n, k)) ? Form::kRing : Form::kSum;
}
}  // namespace detail

const char* form_name(Form f) {
  switch (f) {
    case Form::kSequential: return "sequential";
    case Form::kOwnGather: return "the own GEMM over row shards";
    case Form::kCublasGather: return "cuBLASLt GEMMs a shard group at a time";
    case Form::kFused: return "fused (the own GEMM)";
    case Form::kRing: return "ring of cuBLASLt GEMMs";
    case Form::kSum: return "cuBLASLt GEMMs and a sum kernel";
    case Form::kOwnRing: return "epilogue ring (the own GEMM)";
    case Form::kOwnGatherT: return "the own GEMM over row shards, transposed 160 x 128 tiles";
    case Form::kFusedT: return "fused (the own GEMM, transposed 160 x 128 tiles)";
  }
  return "invalid";
}

}  // namespace symmem::overlap
