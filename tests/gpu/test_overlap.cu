// Overlapped tensor-parallel GEMMs against a host reference (gathered A times B in fp32, a
// tolerance in the band of the dtype, bf16 or fp16): all-gather + GEMM (with the gathered A), GEMM +
// reduce-scatter (sum and avg), in overlap and sequential modes, replayed in a CUDA graph with new
// data; an M that is not a multiple of the ranks is refused on every rank.
#include "overlap_check.hpp"
#include "../../src/overlap/hopper_gemm.hpp"
#include "../../src/overlap/hopper_schedule.hpp"
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <cuda.h>

using namespace symmem;
using namespace symmem::test;

namespace {

// The one-GPU tests of the own GEMM's row shards: `count` shards of `rows` rows in `groups` row
// groups, K x Nc, the scale of the summed shard.
struct ShardCase {
  int rows, count, groups;
  int64_t k, n;
  float scale;
};
int this_device() {
  int dev = 0;
  SYMMEM_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

// SYMMEM_TEST_CASES=1: the cases and operations are named on stderr as they start and end (which
// one a run that outlives its time limit is in).
bool named_cases() { return std::getenv("SYMMEM_TEST_CASES") != nullptr; }
void ended(const char* op, cudaStream_t s) {
  ctx()->synchronize(s, op);
  std::fprintf(stderr, "[case] %s done\n", op);
}

// matmul_reduce_scatter's result on this rank, C_shard = sum_r (A_r x B_r)[rows of this rank], from
// every rank's A [n x rows, k] and B [k, nc]: the values and the sums of the terms' magnitudes.
void reduce_scatter_reference(const std::vector<std::vector<float>>& fulls, const std::vector<std::vector<float>>& bs, int64_t rows,
                              int64_t k, int64_t nc, std::vector<double>* ref, std::vector<double>* mag) {
  const int n = comm().size(), me = comm().rank();
  ref->assign(rows * nc, 0.0);
  mag->assign(rows * nc, 0.0);
  for (int r = 0; r < n; ++r)  // (rank order within each row)
    gemm_reference(fulls[r].data() + me * rows * k, bs[r].data(), rows, k, nc, n, ref->data(), mag->data());
}

std::string run_overlap(overlap::Mode mode, bool graph, int64_t m, int64_t k, int64_t nc, DataType dt) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const int64_t rows = m / n;
  overlap::TensorParallel tp(c, std::max<int64_t>(1024, m), 512, std::max<int64_t>(512, nc));
  DeviceBuffer a_shard(rows * k * 2), a_full(m * k * 2), b(k * nc * 2), cfull(m * nc * 2), cshard(rows * nc * 2), a_out(m * k * 2);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t exec = nullptr;
  // One iteration: this rank's mismatch ("" where it matched). The ranks agree on each one's
  // verdict before the next (agreed_step).
  auto iteration = [&](int it) -> std::string {
    // Rank r: A shard (AG), full A (RS) and its own B (a column / row shard of the weight).
    std::vector<std::vector<float>> shards(n), fulls(n), bs(n);
    std::vector<uint8_t> bytes, my_shard, my_full, my_b;
    for (int r = 0; r < n; ++r) {
      shards[r] = rand_half(dt, rows * k, 1000 * it + 10 * r + 1, &bytes);
      if (r == me) my_shard = bytes;
      fulls[r] = rand_half(dt, m * k, 1000 * it + 10 * r + 2, &bytes);
      if (r == me) my_full = bytes;
      bs[r] = rand_half(dt, k * nc, 1000 * it + 10 * r + 3, &bytes);
      if (r == me) my_b = bytes;
    }
    upload(a_shard.p, my_shard);
    upload(a_full.p, my_full);
    upload(b.p, my_b);
    SYMMEM_CUDA_CHECK(cudaMemset(cfull.p, 0xCD, cfull.n));
    SYMMEM_CUDA_CHECK(cudaMemset(cshard.p, 0xCD, cshard.n));
    SYMMEM_CUDA_CHECK(cudaMemset(a_out.p, 0xCD, a_out.n));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    // each: under SYMMEM_TEST_CASES (eager), each operation synchronised and named as it ends.
    auto enqueue = [&](cudaStream_t st, bool each) {
      tp.all_gather_matmul(a_shard.p, m, k, b.p, nc, cfull.p, a_out.p, st, mode, dt);
      if (each) ended("all_gather_matmul", st);
      tp.matmul_reduce_scatter(a_full.p, m, k, b.p, nc, cshard.p, it == 1 ? ReduceOp::kAvg : ReduceOp::kSum, st, mode, dt);
      if (each) ended("matmul_reduce_scatter", st);
    };
    if (graph) {
      if (it == 0) exec = capture_graph(s, [&] { enqueue(s, false); });
      SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    } else {
      enqueue(s, named_cases());
    }
    ctx()->synchronize(s, "overlap");
    // (A graph captured the sum; its replays run the sum too.)
    const bool avg = !graph && it == 1;
    // All-gather + GEMM: C = [shard_0; ...; shard_{n-1}] x B_me.
    std::vector<double> ref(m * nc, 0.0), mag(m * nc, 0.0);
    for (int r = 0; r < n; ++r) gemm_reference(shards[r].data(), bs[me].data(), rows, k, nc, n, &ref[r * rows * nc], &mag[r * rows * nc]);
    std::string why = compare(dt, download(cfull.p, m * nc * 2), ref, mag);
    if (!why.empty()) return "all_gather_matmul: " + why;
    std::vector<uint8_t> gathered = download(a_out.p, m * k * 2);
    for (int64_t i = 0; i < m * k; ++i)
      if (to_float(dt, &gathered[2 * i]) != shards[i / (rows * k)][i % (rows * k)]) return "a_out differs at " + std::to_string(i);
    // GEMM + reduce-scatter: C_shard = sum_r (A_r x B_r)[rows of me].
    std::vector<double> rref, rmag;
    reduce_scatter_reference(fulls, bs, rows, k, nc, &rref, &rmag);
    if (avg)
      for (auto& x : rref) x /= n;
    why = compare(dt, download(cshard.p, rows * nc * 2), rref, rmag);
    return why.empty() ? why : "matmul_reduce_scatter: " + why;
  };
  std::string why;
  for (int it = 0; it < (graph ? 3 : 2) && why.empty(); ++it) why = agreed_step([&] { return iteration(it); });  // eager: a sum, then an avg
  if (exec) cudaGraphExecDestroy(exec);
  cudaStreamDestroy(s);
  return why;
}

// run_overlap under attempt(): a mismatch or an error on this rank, as a message ("" when it passed).
// rs: matmul_reduce_scatter's form at 3 ranks and more ("ring", "sum"; nullptr: the shape's choice,
// overlap::detail::rs_ring); groups: all_gather_matmul's ("1": grouped at any size, "0": one GEMM a
// shard; nullptr: overlap::detail::gather_groups); set alike on every rank.
std::string overlap_case(overlap::Mode mode, bool graph, int64_t m, int64_t k, int64_t nc, const char* rs = nullptr,
                         const char* groups = nullptr, const char* gemm = nullptr, DataType dt = DataType::kBFloat16) {
  if (rs != nullptr) setenv("SYMMEM_OVERLAP_RS", rs, 1);
  if (groups != nullptr) setenv("SYMMEM_OVERLAP_GROUPS", groups, 1);
  if (gemm != nullptr) setenv("SYMMEM_OVERLAP_GEMM", gemm, 1);
  if (named_cases())
    std::fprintf(stderr, "[case] mode %d graph %d m %lld k %lld nc %lld rs %s groups %s gemm %s\n", static_cast<int>(mode), graph ? 1 : 0,
                 static_cast<long long>(m), static_cast<long long>(k), static_cast<long long>(nc), rs ? rs : "-", groups ? groups : "-",
                 gemm ? gemm : "-");
  std::string why = agreed_step([&] { return run_overlap(mode, graph, m, k, nc, dt); });  // (agreed: the callers run cases in a row)
  // (Only what this case set: a setting given to the whole run stays for the next case.)
  if (rs != nullptr) unsetenv("SYMMEM_OVERLAP_RS");
  if (groups != nullptr) unsetenv("SYMMEM_OVERLAP_GROUPS");
  if (gemm != nullptr) unsetenv("SYMMEM_OVERLAP_GEMM");
  if (!why.empty() && rs != nullptr) why = std::string("(SYMMEM_OVERLAP_RS=") + rs + ") " + why;
  if (!why.empty() && groups != nullptr) why = std::string("(SYMMEM_OVERLAP_GROUPS=") + groups + ") " + why;
  if (!why.empty() && gemm != nullptr) why = std::string("(SYMMEM_OVERLAP_GEMM=") + gemm + ") " + why;
  if (!why.empty() && dt != DataType::kBFloat16) why = std::string("(") + dtype_name(dt) + ") " + why;
  return why;
}

// Rows a rank (a multiple of 256, the own GEMM's unit) that make at least 2048 rows in all: with
// Nc 4096 that is 128 units of 256 x 256 for the 66 clusters of an H100 / H200, so some CTAs take
// two tiles whatever the number of ranks (512 rows a rank at 4 ranks, 1024 at 2).
int64_t many_tiles_rows(int n) { return 256 * ((8 + n - 1) / n); }

}  // namespace

TEST(Overlap, GemmsWithCommunicationMatchTheReference) {
  const int n = comm().size();
  std::string why;
  const int64_t m = 256 * n > 1024 ? 1024 / n * n : 256 * n;
  for (auto mode : {overlap::Mode::kOverlap, overlap::Mode::kSequential, overlap::Mode::kAuto}) {
    why = overlap_case(mode, false, m, 256, 384);
    if (!why.empty()) { why = "mode " + std::to_string(static_cast<int>(mode)) + ": " + why; break; }
  }
  // Both forms of matmul_reduce_scatter's overlap, whatever the shape chooses.
  for (const char* rs : {"ring", "sum"})
    if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, false, m, 256, 384, rs);
  ASSERT_ALL(why.empty(), why);
}

// Wide outputs make all_gather_matmul run several peers' shards in one GEMM
// (overlap::detail::gather_groups; SYMMEM_OVERLAP_GROUPS=1 groups these small shards too): at 3
// ranks and more a group's shards wrap past the last rank on some ranks (a batched GEMM of two
// runs, or two GEMMs where the runs differ in length).
TEST(Overlap, WideOutputsGroupThePeersShards) {
  const int n = comm().size();
  std::string why;
  for (int64_t nc : {3072, 8192})
    for (bool graph : {false, true}) {
      why = overlap_case(overlap::Mode::kOverlap, graph, 64 * n, 64, nc, nullptr, "1");
      if (!why.empty()) { why = "Nc " + std::to_string(nc) + (graph ? " (graph): " : ": ") + why; break; }
    }
  ASSERT_ALL(why.empty(), why);
}

// An odd number of rows a rank: matmul_reduce_scatter's ring cuts each step into unequal parts (65
// rows in 8 parts at K = 128, overlap::detail::rs_chunks), each with its own signal, every step
// after the first adding the next rank's partial sum of the same part in its GEMM; and the sum form.
TEST(Overlap, OddRowsPerRankSplitIntoUnequalParts) {
  const int n = comm().size();
  std::string why = overlap_case(overlap::Mode::kOverlap, false, 65 * n, 128, 256, "ring");
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, false, 65 * n, 128, 256, "sum");
  ASSERT_ALL(why.empty(), why);
}

// fp16 operands: every cuBLASLt form (overlap and sequential, the reduce-scatter's ring and sum
// forms, all_gather_matmul's groups), eager and in a graph; and with SYMMEM_OVERLAP_GEMM=own,
// which multiplies bf16 only, the same calls take cuBLASLt's forms. Another dtype is refused.
TEST(Overlap, HalfPrecisionMatchesTheReference) {
  const int n = comm().size();
  const DataType h = DataType::kFloat16;
  const int64_t m = 256 * n > 1024 ? 1024 / n * n : 256 * n;
  std::string why;
  for (auto mode : {overlap::Mode::kOverlap, overlap::Mode::kSequential})
    if (why.empty()) why = overlap_case(mode, false, m, 256, 384, nullptr, nullptr, nullptr, h);
  for (const char* rs : {"ring", "sum"})
    if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, true, 65 * n, 128, 256, rs, nullptr, nullptr, h);
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, false, 64 * n, 64, 3072, nullptr, "1", nullptr, h);
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, false, 256 * n, 320, 384, nullptr, nullptr, "own", h);
  if (why.empty()) {
    overlap::TensorParallel tp(comm(), 64 * n, 64, 64);
    DeviceBuffer a(64 * n * 64 * 4), b(64 * 64 * 4), c(64 * n * 64 * 4);
    const std::string e = attempt([&] { tp.all_gather_matmul(a.p, 64 * n, 64, b.p, 64, c.p, nullptr, nullptr, overlap::Mode::kAuto, DataType::kFloat32); });
    if (e.find("dtype float is not supported") == std::string::npos) why = "float32 operands: got '" + e + "'";
  }
  ASSERT_ALL(why.empty(), why);
}

TEST(Overlap, ReplayedInACudaGraphWithNewData) {
  const int n = comm().size();
  std::string why = overlap_case(overlap::Mode::kOverlap, true, 128 * n, 128, 256, "ring");
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, true, 128 * n, 128, 256, "sum");
  ASSERT_ALL(why.empty(), why);
}

// all_gather_matmul through symmem's own Hopper GEMM (SYMMEM_OVERLAP_GEMM=own): one persistent
// kernel whose tiles wait for their shard's signal. 256 rows a rank (the GEMM's cluster of two row
// blocks), K with a partial last k-block (320), Nc with a partial last column block (384); eager
// and replayed in a graph. Then Nc 4096 over at least 2048 rows: more tiles than CTAs at any
// number of ranks, so tiles wait for their shard while the CTA's previous tile is still being
// stored. Where it cannot run (not Hopper, ranks sharing a GPU), the same calls take cuBLASLt's
// path and must pass all the same.
namespace {
// The calls above; `whole_tiles` adds 1280 rows a rank in a graph (the transposed GEMM's eight whole
// 160-row tiles).
std::string own_all_gather_cases(bool whole_tiles) {
  const int n = comm().size();
  std::string why;
  for (bool graph : {false, true}) {
    why = overlap_case(overlap::Mode::kOverlap, graph, 256 * n, 320, 384, nullptr, nullptr, "own");
    if (!why.empty()) return std::string(graph ? "(graph) " : "") + why;
  }
  why = overlap_case(overlap::Mode::kOverlap, false, many_tiles_rows(n) * n, 256, 4096, nullptr, nullptr, "own");
  if (why.empty() && whole_tiles) why = overlap_case(overlap::Mode::kOverlap, true, 1280 * n, 136, 1024, nullptr, nullptr, "own");
  return why;
}
}  // namespace

TEST(Overlap, OwnGemmAllGatherMatchesTheReference) {
  ScopedEnv t("SYMMEM_OVERLAP_GEMM_T", "0");  // (hopper_gemm's 128 x 256 tiles, whatever the model says)
  const std::string why = own_all_gather_cases(false);
  ASSERT_ALL(why.empty(), why);
}

// The same calls with the own form's GEMM in transposed 160 x 128 tiles (SYMMEM_OVERLAP_GEMM_T=1:
// hopper_gemm_t, ping-pong consumers): a shard's 256 rows end in a partial tile (96 of 160 rows),
// clipped at the shard's last row while the next shard's rows may still be in flight; then more
// tiles than CTAs, and 1280 rows a rank (eight whole tiles). Then again with a shard's tiles of
// 160 rows after the first in tiles of 128 (SYMMEM_OVERLAP_GEMM_T_TALL=1: 256 rows one of each,
// the second's rows 128-159 past the shard's end; 1280 rows one of 160 and nine of 128, the
// last clipped), as schedule::t_choose_tall sets them where they shorten the walk.
TEST(Overlap, OwnGemmTransposedAllGatherMatchesTheReference) {
  ScopedEnv t("SYMMEM_OVERLAP_GEMM_T", "1");
  std::string why = own_all_gather_cases(true);
  if (!why.empty()) why = "(SYMMEM_OVERLAP_GEMM_T=1) " + why;
  if (why.empty()) {
    ScopedEnv tall("SYMMEM_OVERLAP_GEMM_T_TALL", "1");
    why = own_all_gather_cases(true);
    if (!why.empty()) why = "(SYMMEM_OVERLAP_GEMM_T=1, SYMMEM_OVERLAP_GEMM_T_TALL=1) " + why;
  }
  ASSERT_ALL(why.empty(), why);
}

// matmul_reduce_scatter's fused form on symmem's own GEMM (SYMMEM_OVERLAP_GEMM=own): one persistent
// GEMM over all rows whose per-row-group counts start the copies, and whose own block's tiles add
// the landed partials (sum and avg). 256 rows a rank, K with a partial last k-block (320) and a
// short k-loop (64: a tile is counted after its k-loop), Nc with a partial last column block (384);
// eager and replayed in a graph. Then Nc 4096 over at least 2048 rows: more tiles than CTAs at any
// number of ranks, so most are counted inside the CTA's next k-loop. Where it cannot run (ranks
// sharing a GPU, not Hopper), the same calls take the sum form and must pass all the same.
namespace {
std::string own_reduce_scatter_cases() {
  const int n = comm().size();
  std::string why;
  for (int64_t k : {320, 64})
    for (bool graph : {false, true}) {
      why = overlap_case(overlap::Mode::kOverlap, graph, 256 * n, k, 384, "sum", nullptr, "own");
      if (!why.empty()) { why = "K " + std::to_string(k) + (graph ? " (graph): " : ": ") + why; break; }
    }
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, false, many_tiles_rows(n) * n, 256, 4096, "sum", nullptr, "own");
  // Row groups (overlap::detail::rs_groups): 1024 rows a rank go in two pushes a peer block, and
  // the own block's tiles of each group wait for that group's signals; 768 rows: three groups of 256.
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, false, 1024 * n, 128, 512, "sum", nullptr, "own");
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, true, 768 * n, 192, 640, "sum", nullptr, "own");
  // Four row groups of 512 rows, in a graph.
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, true, 2048 * n, 64, 512, "sum", nullptr, "own");
  // C 8192 columns wide: the fused forms' wide raster (overlap::detail::reduce_raster: 8 row units
  // at a time), more units a shard than clusters.
  if (why.empty()) why = overlap_case(overlap::Mode::kOverlap, false, 2048 * n, 64, 8192, "sum", nullptr, "own");
  return why;
}
}  // namespace

TEST(Overlap, OwnGemmReduceScatterMatchesTheReference) {
  ScopedEnv t("SYMMEM_OVERLAP_RS_GEMM_T", "0");  // (hopper_gemm's 128 x 256 tiles, whatever the model says)
  const std::string why = own_reduce_scatter_cases();
  ASSERT_ALL(why.empty(), why);
}

// The same calls with the fused form's GEMM in transposed 160 x 128 tiles
// (SYMMEM_OVERLAP_RS_GEMM_T=1: hopper_gemm_t, Form::kFusedT): its tiles count once in every row
// group they overlap (groups of 256 and 512 rows against 160-row tiles), its own block's tiles add
// the peers' partials from the stage ring. Where the own GEMM cannot run, the calls take the sum
// form and must pass all the same. Then again with tiles of 128 rows after each shard's first of
// 160 (SYMMEM_OVERLAP_GEMM_T_TALL=1): their counts' targets, partial adds of 128 rows and 48-row
// stores.
TEST(Overlap, OwnGemmTransposedReduceScatterMatchesTheReference) {
  ScopedEnv t("SYMMEM_OVERLAP_RS_GEMM_T", "1");
  std::string why = own_reduce_scatter_cases();
  if (!why.empty()) why = "(SYMMEM_OVERLAP_RS_GEMM_T=1) " + why;
  if (why.empty()) {
    ScopedEnv tall("SYMMEM_OVERLAP_GEMM_T_TALL", "1");
    why = own_reduce_scatter_cases();
    if (!why.empty()) why = "(SYMMEM_OVERLAP_RS_GEMM_T=1, SYMMEM_OVERLAP_GEMM_T_TALL=1) " + why;
  }
  ASSERT_ALL(why.empty(), why);
}

// The fused form's straddle (SYMMEM_OVERLAP_RS_STRADDLE=1 on hopper_gemm_t, SYMMEM_OVERLAP_RS_GEMM_T=1;
// at 2 ranks, where a shard's rows leave 1-80 over whole 160-row tiles: HopperRowShards::straddle):
// one row of tiles holds shard 0's last rows and shard 1's first (its first box clipped at shard
// 0's end, its second stored through a map of shard 1's first rows), stored into the staging,
// counted in the peer's row group, and its own rows summed apart by the producer's idle warps.
// 512 rows a rank (3 x 160 + 32; eager sum and avg, then a graph), 1792 in seven row groups of
// 256 (32), 1024 in two (64; in a graph), 1024 x Nc 4096: more units than clusters, so some
// clusters run a straddle tile and others none, and 512 x Nc 17408: more column units (68) than an
// H200's clusters (66), so some clusters run two straddle tiles; 1792 x Nc 8192 in a graph: the
// straddle in the wide raster (overlap::detail::reduce_raster). (The own GEMM takes whole 256-row
// units a rank, so 32 and 64 are the straddles it meets.) At other team sizes the straddle applies
// nowhere and the calls must pass all the same.
TEST(Overlap, OwnGemmTransposedReduceScatterStraddles) {
  ScopedEnv t("SYMMEM_OVERLAP_RS_GEMM_T", "1");
  ScopedEnv st("SYMMEM_OVERLAP_RS_STRADDLE", "1");
  const int n = comm().size();
  const struct { int64_t rows, k, nc; bool graph; } cases[] = {{512, 320, 384, false}, {512, 128, 512, true}, {1792, 64, 384, false},
                                                               {1024, 128, 512, true}, {1024, 64, 4096, false}, {512, 64, 17408, false},
                                                               {1792, 64, 8192, true}};
  std::string why;
  for (const auto& c : cases)
    if (why.empty() && overlap::schedule::t_straddle_rows(static_cast<int>(c.rows), 2) == 0)
      why = "internal: " + std::to_string(c.rows) + " rows a rank leave no straddle";
  for (const auto& c : cases)
    if (why.empty()) {
      why = overlap_case(overlap::Mode::kOverlap, c.graph, c.rows * n, c.k, c.nc, "sum", nullptr, "own");
      if (!why.empty()) why = "(SYMMEM_OVERLAP_RS_STRADDLE=1) " + std::to_string(c.rows) + " rows a rank: " + why;
    }
  ASSERT_ALL(why.empty(), why);
}

// The same calls in the own GEMM's epilogue ring (SYMMEM_OVERLAP_OWN_RS=ring): every block but
// the first adds its predecessor's partial sum and travels on to the next rank. (At 2 ranks it
// moves what the fused form moves; from 3 on, it differs.) Where the own GEMM cannot run, the
// calls take the cuBLASLt forms and must pass all the same; the form that ran is printed.
TEST(Overlap, OwnGemmEpilogueRingMatchesTheReference) {
  setenv("SYMMEM_OVERLAP_OWN_RS", "ring", 1);
  std::string form;
  std::string why = attempt([&] {
    overlap::TensorParallel tp(comm(), 1024, 512, 512);
    form = overlap::form_name(tp.form(overlap::Op::kMatmulReduceScatter, 256 * comm().size(), 320, 384, overlap::Mode::kOverlap));
  });
  if (why.empty()) why = own_reduce_scatter_cases();
  unsetenv("SYMMEM_OVERLAP_OWN_RS");
  if (comm().rank() == 0) std::fprintf(stderr, "[ring] matmul_reduce_scatter ran as: %s\n", form.c_str());
  ASSERT_ALL(why.empty(), why);
}

// matmul_reduce_scatter's forms one after another on one TensorParallel, eager and replayed in a
// CUDA graph with new data: the fused forms start without a barrier and their pushes wait for the
// credits that every recv call hands out at its end (src/overlap/credits.cuh), so each form must
// leave recv ready for any other. The calls, each with its own operands and output: fused (bf16,
// SYMMEM_OVERLAP_GEMM=own), a cuBLASLt form (fp16 takes those), sequential, fused over twice the
// rows, fused again right after it, and a sum form (rows not a multiple of 256: no own GEMM).
// Where the own GEMM cannot run, the bf16 calls take the cuBLASLt forms and must pass all the
// same; rank 0 prints the forms that ran.
namespace {
// The calls of the test below, this rank's failure ("" where it passed); the forms they took are
// added to *forms.
std::string reduce_scatter_forms_one_after_another(std::string* forms) {
  const int n = comm().size(), me = comm().rank();
  struct Call {
    int64_t rows, k, nc;
    DataType dt;
    overlap::Mode mode;
  };
  const Call calls[] = {{256, 320, 384, DataType::kBFloat16, overlap::Mode::kOverlap}, {256, 192, 384, DataType::kFloat16, overlap::Mode::kOverlap},
                        {256, 128, 512, DataType::kBFloat16, overlap::Mode::kSequential}, {512, 128, 512, DataType::kBFloat16, overlap::Mode::kOverlap},
                        {256, 64, 384, DataType::kBFloat16, overlap::Mode::kOverlap},     {384, 128, 256, DataType::kBFloat16, overlap::Mode::kOverlap}};
  const size_t nk = sizeof(calls) / sizeof(calls[0]);
  return attempt([&] {
    overlap::TensorParallel tp(comm(), 512 * n, 512, 512);
    for (const Call& c : calls)
      *forms += std::string(&c == calls ? "" : ", ") + overlap::form_name(tp.form(overlap::Op::kMatmulReduceScatter, c.rows * n, c.k, c.nc, c.mode, c.dt));
    std::vector<std::unique_ptr<DeviceBuffer>> a, b, out;
    for (const Call& c : calls) {
      a.push_back(std::make_unique<DeviceBuffer>(c.rows * n * c.k * 2));
      b.push_back(std::make_unique<DeviceBuffer>(c.k * c.nc * 2));
      out.push_back(std::make_unique<DeviceBuffer>(c.rows * c.nc * 2));
    }
    cudaStream_t s;
    SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraphExec_t exec = nullptr;
    auto enqueue = [&](cudaStream_t st) {
      for (size_t i = 0; i < nk; ++i)
        tp.matmul_reduce_scatter(a[i]->p, calls[i].rows * n, calls[i].k, b[i]->p, calls[i].nc, out[i]->p, ReduceOp::kSum, st, calls[i].mode,
                                 calls[i].dt);
    };
    // One iteration (eager twice, then a graph captured once and replayed twice): this rank's
    // mismatch; the ranks agree on each one's verdict before the next (agreed_step).
    auto iteration = [&](int it) -> std::string {
      std::vector<std::vector<std::vector<float>>> fulls(nk, std::vector<std::vector<float>>(n)), bs(nk, std::vector<std::vector<float>>(n));
      for (size_t i = 0; i < nk; ++i) {
        const Call& c = calls[i];
        std::vector<uint8_t> bytes, my_a, my_b;
        for (int r = 0; r < n; ++r) {
          fulls[i][r] = rand_half(c.dt, c.rows * n * c.k, 7000 * it + 100 * i + 10 * r + 1, &bytes);
          if (r == me) my_a = bytes;
          bs[i][r] = rand_half(c.dt, c.k * c.nc, 7000 * it + 100 * i + 10 * r + 2, &bytes);
          if (r == me) my_b = bytes;
        }
        upload(a[i]->p, my_a);
        upload(b[i]->p, my_b);
        SYMMEM_CUDA_CHECK(cudaMemset(out[i]->p, 0xCD, out[i]->n));
      }
      SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
      if (it < 2) {
        enqueue(s);
      } else {
        if (exec == nullptr) exec = capture_graph(s, [&] { enqueue(s); });
        SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
      }
      ctx()->synchronize(s, "matmul_reduce_scatter's forms");
      for (size_t i = 0; i < nk; ++i) {
        std::vector<double> ref, mag;
        reduce_scatter_reference(fulls[i], bs[i], calls[i].rows, calls[i].k, calls[i].nc, &ref, &mag);
        const std::string bad = compare(calls[i].dt, download(out[i]->p, calls[i].rows * calls[i].nc * 2), ref, mag);
        if (!bad.empty()) return "call " + std::to_string(i) + (it < 2 ? " (eager)" : " (graph)") + ": " + bad;
      }
      return std::string();
    };
    std::string bad;
    for (int it = 0; it < 4 && bad.empty(); ++it) bad = agreed_step([&] { return iteration(it); });
    if (exec) cudaGraphExecDestroy(exec);
    cudaStreamDestroy(s);
    if (!bad.empty()) throw std::runtime_error(bad);
  });
}
}  // namespace

TEST(Overlap, ReduceScatterFormsOneAfterAnother) {
  ScopedEnv own("SYMMEM_OVERLAP_GEMM", "own");
  std::string why, forms;
  for (const char* t : {"1", "0"}) {  // the fused form's GEMM in transposed tiles, then not
    ScopedEnv rs_t("SYMMEM_OVERLAP_RS_GEMM_T", t);
    forms += std::string(forms.empty() ? "" : "; ") + "SYMMEM_OVERLAP_RS_GEMM_T=" + t + ": ";
    why = agreed_step([&] { return reduce_scatter_forms_one_after_another(&forms); });
    if (!why.empty()) {
      why = std::string("(SYMMEM_OVERLAP_RS_GEMM_T=") + t + ") " + why;
      break;
    }
  }
  if (comm().rank() == 0) std::fprintf(stderr, "[forms] matmul_reduce_scatter ran as: %s\n", forms.c_str());
  ASSERT_ALL(why.empty(), why);
}

// symmem's own Hopper GEMM over row shards on one GPU (every rank alone on its own), each way it
// can hold a tile's epilogue (HopperGemmOptions::defer_halves 0, 1, 2: the halves stored before
// the next tile, one of them or both under its first k-blocks), both cluster sizes:
// - all_gather_matmul's form: shards run from `first` down, shard `first` read from a separate
//   copy (its rows in A poisoned), every shard's half tiles counted in done;
// - matmul_reduce_scatter's fused form: the last shard's tiles add the other shards' partials
//   (random, in a symmetric buffer, their signals set beforehand) and store scale x the sum into
//   out; the other shards go to C and are counted;
// - its epilogue ring: every shard but the first adds the partial in its own slot (the last
//   shard's sum to out, scaled), the others go to C with their partial added and are counted;
// - the fused form on hopper_gemm_t, the partials through the summing consumer's C slots (the
//   default at any shard count since session 63) and through the stage ring (sum_in_ring), its
//   done words counting tiles per row group (hopper_t_group_count).
// Partial last k-block and column block, a one-k-block loop, one to three row groups, more tiles
// than CTAs. C, out and done are checked, poisoned first. (Hopper only; skipped elsewhere.)
TEST(Overlap, OwnGemmRowShardsOnOneGpu) {
  const int dev = this_device();
  const bool hopper = overlap::hopper_gemm_supported(dev);
  const ShardCase cases[] = {{256, 2, 1, 320, 384, 1.0f},   {768, 3, 3, 64, 640, 0.5f},   {1024, 3, 2, 192, 512, 1.0f},
                             {512, 4, 1, 128, 4096, 0.25f}, {1024, 4, 2, 256, 1024, 0.5f}, {512, 8, 2, 192, 768, 1.0f}};
  std::string why;
  SymmetricBuffer land = comm().alloc(size_t(4) * 512 * 4096 * 2);  // (collective: every rank, Hopper or not)
  for (const ShardCase& c : cases) {
    if (!hopper || !why.empty()) break;
    why = attempt([&] {
      const int64_t m = static_cast<int64_t>(c.rows) * c.count;
      std::vector<uint8_t> abytes, bbytes, pbytes;
      const std::vector<float> a = rand_half(DataType::kBFloat16, m * c.k, 17 + c.rows, &abytes), b = rand_half(DataType::kBFloat16, c.k * c.n, 19 + c.count, &bbytes);
      const std::vector<float> part = rand_half(DataType::kBFloat16, m * c.n, 23 + c.groups, &pbytes);  // slot p: the partial "from rank p"
      std::vector<double> prod(m * c.n, 0.0), mag(m * c.n, 0.0);
      gemm_reference(a.data(), b.data(), m, c.k, c.n, 1, prod.data(), mag.data());
      DeviceBuffer da(abytes.size()), db(bbytes.size()), dc(m * c.n * 2), dout(static_cast<size_t>(c.rows) * c.n * 2),
          dlocal(static_cast<size_t>(c.rows) * c.k * 2), ddone(sizeof(unsigned long long) * c.count * c.groups);
      upload(db.p, bbytes);
      upload(land.ptr(), pbytes);
      const uint64_t halves = overlap::hopper_shard_halves(c.rows / c.groups, c.n);
      for (int cluster : {2, 1})
        for (int defer = 0; defer <= 2; ++defer)
          for (int form = 0; form < 5; ++form) {
            // (3, 4: hopper_gemm_t's fused sum, its partials through the summing consumer's C slots
            // and through the stage ring, HopperRowShards::sum_in_ring; once a case: the cluster and
            // the deferral are hopper_gemm's.)
            const bool t = form >= 3;
            if (t && (cluster != 2 || defer != 0)) continue;
            const bool sum = form > 0, ring = form == 2;
            const std::string name = std::string(form == 4 ? "hopper_gemm_t's fused sum, partials in the ring"
                                                 : t       ? "hopper_gemm_t's fused sum, partials in the C slots"
                                                 : ring    ? "ring"
                                                 : sum     ? "fused sum"
                                                           : "gather shards") +
                                     ", cluster " + std::to_string(cluster) + ", defer_halves " +
                                     std::to_string(defer) + ", " + std::to_string(c.count) + " shards of " + std::to_string(c.rows) + " rows, " +
                                     std::to_string(c.groups) + " row groups, K " + std::to_string(c.k) + ", Nc " + std::to_string(c.n) + ": ";
            upload(da.p, abytes);
            poison(dc.p, dc.n);
            poison(dout.p, dout.n);
            SYMMEM_CUDA_CHECK(cudaMemset(ddone.p, 0, ddone.n));
            overlap::HopperRowShards sh;
            sh.rows = c.rows;
            sh.count = c.count;
            sh.groups = c.groups;
            sh.done = static_cast<unsigned long long*>(ddone.p);
            if (sum) {
              sh.first = c.count - 1;
              sh.sum_shard = 0;
              sh.partials = land.ptr();
              sh.out = dout.p;
              sh.scale = c.scale;
              sh.ring = ring;
              sh.sum_in_ring = form == 4;
              sh.handle = land.handle();
              const std::vector<uint64_t> landed(c.count, static_cast<uint64_t>(c.groups));  // every group of every peer
              SYMMEM_CUDA_CHECK(cudaMemcpy(land.signal_pad(), landed.data(), landed.size() * 8, cudaMemcpyHostToDevice));
            } else {
              sh.first = 1 % c.count;
              SYMMEM_CUDA_CHECK(cudaMemcpy(dlocal.p, static_cast<uint8_t*>(da.p) + static_cast<size_t>(sh.first) * c.rows * c.k * 2,
                                           dlocal.n, cudaMemcpyDeviceToDevice));
              poison(static_cast<uint8_t*>(da.p) + static_cast<size_t>(sh.first) * c.rows * c.k * 2, dlocal.n);
              sh.local = dlocal.p;
              sh.local_ld = c.k;
            }
            overlap::HopperGemmOptions opt;
            opt.cluster = cluster;
            opt.group_m = 2;
            opt.defer_halves = defer;
            if (t)
              overlap::hopper_gemm_t(m, c.n, c.k, da.p, c.k, db.p, c.n, dc.p, c.n, opt, nullptr, &sh);
            else
              overlap::hopper_gemm(m, c.n, c.k, da.p, c.k, db.p, c.n, dc.p, c.n, opt, nullptr, &sh);
            ctx()->synchronize(nullptr, "the own GEMM over row shards");
            // (What a row group's done word reaches: hopper_gemm's half tiles, hopper_gemm_t's tiles
            // overlapping the group.)
            const int tall = t ? overlap::hopper_t_tall(m, c.n, opt, &sh) : 0;
            auto want_done = [&](int g) {
              return t ? overlap::hopper_t_group_count(c.rows, c.rows / c.groups, g, c.n, tall) : halves;
            };
            const std::vector<uint8_t> got = download(dc.p, dc.n);
            const std::vector<uint64_t> done = [&] {
              std::vector<uint64_t> d(c.count * c.groups);
              SYMMEM_CUDA_CHECK(cudaMemcpy(d.data(), ddone.p, ddone.n, cudaMemcpyDeviceToHost));
              return d;
            }();
            for (int p = 0; p < c.count; ++p) {
              if (sum && p == 0) continue;  // (its rows go to out)
              const size_t at = static_cast<size_t>(p) * c.rows * c.n;
              const std::vector<uint8_t> rows(got.begin() + 2 * at, got.begin() + 2 * (at + static_cast<size_t>(c.rows) * c.n));
              std::vector<double> want(prod.begin() + at, prod.begin() + at + c.rows * c.n), wmag(mag.begin() + at, mag.begin() + at + c.rows * c.n);
              if (ring && p != sh.first)  // the ring: every shard but the first adds its slot's partial
                for (size_t i = 0; i < want.size(); ++i) {
                  want[i] += part[at + i];
                  wmag[i] += std::fabs(part[at + i]);
                }
              const std::string w = compare(DataType::kBFloat16, rows, want, wmag);
              if (!w.empty()) throw std::runtime_error(name + "C's shard " + std::to_string(p) + ": " + w);
              for (int g = 0; g < c.groups; ++g)
                if (done[p * c.groups + g] != want_done(g))
                  throw std::runtime_error(name + "done[" + std::to_string(p * c.groups + g) + "] = " + std::to_string(done[p * c.groups + g]) +
                                           ", want " + std::to_string(want_done(g)));
            }
            if (sum) {
              std::vector<double> ref(static_cast<size_t>(c.rows) * c.n), rmag(ref.size());
              for (size_t i = 0; i < ref.size(); ++i) {
                double v = prod[i], mg = mag[i];
                for (int p = ring ? 0 : 1; p < (ring ? 1 : c.count); ++p) {  // the ring: slot 0's partial alone
                  v += part[p * ref.size() + i];
                  mg += std::fabs(part[p * ref.size() + i]);
                }
                ref[i] = v * c.scale;
                rmag[i] = mg * c.scale;
              }
              const std::string w = compare(DataType::kBFloat16, download(dout.p, dout.n), ref, rmag);
              if (!w.empty()) throw std::runtime_error(name + "out: " + w);
              for (int g = 0; g < c.groups; ++g)
                if (done[g] != 0) throw std::runtime_error(name + "the summed shard was counted in done");
            }
          }
    });
  }
  // HopperRowShards::finished, on both own GEMMs' fused sums: the grid's last CTA sets every done
  // word to kHopperDoneAll (past any target: matmul_reduce_scatter's pushes never wait past the
  // GEMM) and leaves the word zero, launch after launch (four, on one word: hopper_gemm in clusters
  // of 2, hopper_gemm_t, hopper_gemm in clusters of 1, then 2 again).
  if (hopper && why.empty())
    why = attempt([&] {
      const int rows = 512, count = 2, groups = 2, k = 128, n = 512;
      const int64_t m = static_cast<int64_t>(rows) * count;
      std::vector<uint8_t> abytes, bbytes;
      rand_half(DataType::kBFloat16, m * k, 29, &abytes);
      rand_half(DataType::kBFloat16, static_cast<int64_t>(k) * n, 31, &bbytes);
      DeviceBuffer da(abytes.size()), db(bbytes.size()), dc(m * n * 2), dout(static_cast<size_t>(rows) * n * 2),
          dwords(sizeof(unsigned long long) * (count * groups + 1));
      upload(da.p, abytes);
      upload(db.p, bbytes);
      SYMMEM_CUDA_CHECK(cudaMemset(dwords.p, 0, dwords.n));
      const std::vector<uint64_t> landed(count, static_cast<uint64_t>(groups));
      SYMMEM_CUDA_CHECK(cudaMemcpy(land.signal_pad(), landed.data(), landed.size() * 8, cudaMemcpyHostToDevice));
      for (int launch = 0; launch < 4; ++launch) {
        const bool t = launch == 1;
        SYMMEM_CUDA_CHECK(cudaMemset(dwords.p, 0, sizeof(unsigned long long) * count * groups));  // (the counts; not the word)
        overlap::HopperRowShards sh;
        sh.rows = rows;
        sh.count = count;
        sh.groups = groups;
        sh.first = count - 1;
        sh.sum_shard = 0;
        sh.partials = land.ptr();
        sh.out = dout.p;
        sh.handle = land.handle();
        sh.done = static_cast<unsigned long long*>(dwords.p);
        sh.finished = sh.done + count * groups;
        overlap::HopperGemmOptions opt;
        opt.cluster = launch == 2 ? 1 : 2;
        if (t) overlap::hopper_gemm_t(m, n, k, da.p, k, db.p, n, dc.p, n, opt, nullptr, &sh);
        else overlap::hopper_gemm(m, n, k, da.p, k, db.p, n, dc.p, n, opt, nullptr, &sh);
        ctx()->synchronize(nullptr, "the own GEMM's fused sum with its finished word");
        std::vector<uint64_t> w(count * groups + 1);
        SYMMEM_CUDA_CHECK(cudaMemcpy(w.data(), dwords.p, dwords.n, cudaMemcpyDeviceToHost));
        for (int i = 0; i < count * groups; ++i)
          if (w[i] != overlap::kHopperDoneAll)
            throw std::runtime_error(std::string(t ? "hopper_gemm_t" : "hopper_gemm") + ", launch " + std::to_string(launch) + " (cluster " +
                                     std::to_string(opt.cluster) + "): done[" +
                                     std::to_string(i) + "] = " + std::to_string(w[i]) + " after the GEMM, want kHopperDoneAll");
        if (w[count * groups] != 0)
          throw std::runtime_error(std::string(t ? "hopper_gemm_t" : "hopper_gemm") + ", launch " + std::to_string(launch) +
                                   ": the finished word is " + std::to_string(w[count * groups]) + " after the GEMM, want 0");
      }
    });
  const std::string reset = attempt([&] { SYMMEM_CUDA_CHECK(cudaMemset(land.signal_pad(), 0, sizeof(uint64_t) * 8)); });  // (the signals set above)
  if (why.empty()) why = reset;
  comm().free(land);
  if (!hopper) GTEST_SKIP() << "not a Hopper GPU: symmem's own GEMM does not run here";
  ASSERT_ALL(why.empty(), why);
}

// hopper_gemm_t's dynamic schedule (HopperGemmOptions::tile_counter) on one GPU: a plain GEMM whose
// rows are no multiple of the tile's, with every cluster the device holds (fewer units than
// clusters: one tile each, then the end) and with 3 and 4 clusters (many units each, handed from
// CTA 0 to CTA 1); all_gather_matmul's row shards (a local shard, the others' rows poisoned in
// A). Each case three launches back to back on one counter, then a CUDA graph of it replayed
// twice: C against the reference after each (poisoned first), the counter's two words zero after
// each. (Hopper only; skipped elsewhere.)
TEST(Overlap, TransposedGemmDynamicScheduleOnOneGpu) {
  const int dev = this_device();
  const bool hopper = overlap::hopper_gemm_supported(dev);
  struct DynCase {
    int64_t m, n, k;
    int max_ctas, shards;
  };
  const DynCase cases[] = {{1000, 768, 192, 0, 0}, {2048, 1024, 128, 6, 0}, {1536, 512, 320, 8, 3}, {2048, 1024, 128, 0, 0}};
  std::string why;
  for (const DynCase& c : cases) {
    if (!hopper || !why.empty()) break;
    why = attempt([&] {
      std::vector<uint8_t> abytes, bbytes;
      const std::vector<float> a = rand_half(DataType::kBFloat16, c.m * c.k, 41 + c.m, &abytes), b = rand_half(DataType::kBFloat16, c.k * c.n, 43 + c.n, &bbytes);
      std::vector<double> prod(c.m * c.n, 0.0), mag(c.m * c.n, 0.0);
      gemm_reference(a.data(), b.data(), c.m, c.k, c.n, 1, prod.data(), mag.data());
      DeviceBuffer da(abytes.size()), db(bbytes.size()), dc(c.m * c.n * 2), dcount(8), dlocal(c.shards > 0 ? c.m / c.shards * c.k * 2 : 16);
      upload(da.p, abytes);
      upload(db.p, bbytes);
      SYMMEM_CUDA_CHECK(cudaMemset(dcount.p, 0, dcount.n));
      overlap::HopperRowShards sh;
      if (c.shards > 0) {
        sh.count = c.shards;
        sh.rows = static_cast<int>(c.m / c.shards);
        sh.first = 1;
        const size_t at = static_cast<size_t>(sh.first) * sh.rows * c.k * 2;
        SYMMEM_CUDA_CHECK(cudaMemcpy(dlocal.p, static_cast<uint8_t*>(da.p) + at, dlocal.n, cudaMemcpyDeviceToDevice));
        poison(static_cast<uint8_t*>(da.p) + at, dlocal.n);
        sh.local = dlocal.p;
        sh.local_ld = c.k;
      }
      overlap::HopperGemmOptions opt;
      opt.group_m = 2;
      opt.max_ctas = c.max_ctas;
      opt.tile_counter = static_cast<unsigned*>(dcount.p);
      const std::string name = "hopper_gemm_t, dynamic schedule, " + std::to_string(c.m) + " x " + std::to_string(c.n) + " x " + std::to_string(c.k) +
                               ", max_ctas " + std::to_string(c.max_ctas) + ", " + std::to_string(c.shards) + " shards: ";
      cudaStream_t s = nullptr;
      SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      cudaGraphExec_t exec = nullptr;
      std::string bad;
      for (int run = 0; run < 5 && bad.empty(); ++run) {
        poison(dc.p, dc.n);
        auto enqueue = [&] { overlap::hopper_gemm_t(c.m, c.n, c.k, da.p, c.k, db.p, c.n, dc.p, c.n, opt, s, c.shards > 0 ? &sh : nullptr); };
        if (run < 3) {
          enqueue();
        } else {
          if (exec == nullptr) exec = capture_graph(s, enqueue);
          SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
        }
        ctx()->synchronize(s, "hopper_gemm_t with its dynamic schedule");
        const std::string w = compare(DataType::kBFloat16, download(dc.p, dc.n), prod, mag);
        if (!w.empty()) bad = name + "run " + std::to_string(run) + ": C " + w;
        uint32_t words[2] = {1, 1};
        SYMMEM_CUDA_CHECK(cudaMemcpy(words, dcount.p, 8, cudaMemcpyDeviceToHost));
        if (bad.empty() && (words[0] != 0 || words[1] != 0))
          bad = name + "run " + std::to_string(run) + ": the tile counter is left at " + std::to_string(words[0]) + ", " + std::to_string(words[1]) +
                ", want 0, 0";
      }
      if (exec != nullptr) SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
      SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
      if (!bad.empty()) throw std::runtime_error(bad);
    });
  }
  if (!hopper) GTEST_SKIP() << "not a Hopper GPU: symmem's own GEMM does not run here";
  ASSERT_ALL(why.empty(), why);
}

// The epilogue ring's protocol with real waits, on one GPU in one process: V "virtual ranks", each
// its own persistent own GEMM (a fraction of the SMs, so that all V are resident at once), staging,
// landing slots, counts and signal pad, and its pushes as matmul_reduce_scatter makes them
// (overlap.cpp: rs_fused): a stream a block, each row group's copy to the next virtual rank
// waiting for its count, then its signal. Every rank's own block must come out as the scaled sum
// over ranks of its rows' products: the waits, counts and pushes of 3 and 4 ranks, which ranks
// that share a GPU test only through the driver's time slices. (Hopper only, a GPU to each rank;
// skipped elsewhere.)
TEST(Overlap, EpilogueRingOfVirtualRanksOnOneGpu) {
  const int dev = this_device();
  const bool hopper = overlap::hopper_gemm_supported(dev);
  // The driver's stream memory operations, as the library loads them (runtime/driver.hpp keeps its
  // loader inside the library).
  using StreamValue64 = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
  auto entry = [](const char* name) -> StreamValue64 {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess) f = nullptr;
    (void)cudaGetLastError();
    return reinterpret_cast<StreamValue64>(f);
  };
  const StreamValue64 wait64 = entry("cuStreamWaitValue64"), write64 = entry("cuStreamWriteValue64");
  if (!hopper || wait64 == nullptr || write64 == nullptr) GTEST_SKIP() << "needs a Hopper GPU and the driver's 64-bit stream memory operations";
  // (Where ranks share a GPU their virtual rings would only take turns in the driver's time slices:
  // the protocol is tested where a rank has its GPU to itself, as at 1 rank.)
  if (comm().shares_gpu()) GTEST_SKIP() << "ranks share this GPU: run at one rank a GPU";
  auto cu_check = [](CUresult rc, const char* what) {
    if (rc != CUDA_SUCCESS) throw std::runtime_error(std::string(what) + " failed (CUresult " + std::to_string(rc) + ")");
  };
  int sms = 0;
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  std::string why;
  for (int V : {3, 4}) {
    if (!why.empty() || 16 * V + 8 > sms) break;
    why = attempt([&] {
      const int rows = 512, groups = 2, grows = rows / groups;
      const int64_t m = static_cast<int64_t>(rows) * V, k = 256, n = 768;
      const float scale = 0.5f;
      const size_t slot = static_cast<size_t>(rows) * n, gbytes = static_cast<size_t>(grows) * n * 2;
      const uint64_t per_group = overlap::hopper_shard_halves(grows, n);
      struct Rank {
        std::vector<float> a, b;
        std::unique_ptr<DeviceBuffer> da, db, staging, landing, out, done, pad;
        std::vector<cudaStream_t> pushers;
        cudaStream_t s = nullptr;
      };
      std::vector<Rank> r(V);
      for (int v = 0; v < V; ++v) {
        std::vector<uint8_t> ab, bb;
        r[v].a = rand_half(DataType::kBFloat16, m * k, 300 + v, &ab);
        r[v].b = rand_half(DataType::kBFloat16, k * n, 400 + v, &bb);
        r[v].da = std::make_unique<DeviceBuffer>(ab.size());
        r[v].db = std::make_unique<DeviceBuffer>(bb.size());
        upload(r[v].da->p, ab);
        upload(r[v].db->p, bb);
        r[v].staging = std::make_unique<DeviceBuffer>(m * n * 2);
        r[v].landing = std::make_unique<DeviceBuffer>(m * n * 2);
        r[v].out = std::make_unique<DeviceBuffer>(slot * 2);
        r[v].done = std::make_unique<DeviceBuffer>(sizeof(uint64_t) * V * groups);
        r[v].pad = std::make_unique<DeviceBuffer>(sizeof(uint64_t) * 64);
        poison(r[v].staging->p, r[v].staging->n);
        poison(r[v].landing->p, r[v].landing->n);
        poison(r[v].out->p, r[v].out->n);
        SYMMEM_CUDA_CHECK(cudaMemset(r[v].done->p, 0, r[v].done->n));
        SYMMEM_CUDA_CHECK(cudaMemset(r[v].pad->p, 0, r[v].pad->n));
        SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&r[v].s, cudaStreamNonBlocking));
        r[v].pushers.resize(V - 1);
        for (cudaStream_t& ps : r[v].pushers) SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking));
      }
      SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
      for (int v = 0; v < V; ++v) {
        overlap::HopperRowShards sh;
        sh.rows = rows;
        sh.count = V;
        sh.first = (v + V - 1) % V;
        sh.groups = groups;
        sh.done = static_cast<unsigned long long*>(r[v].done->p);
        sh.sum_shard = v;
        sh.ring = true;
        sh.partials = r[v].landing->p;
        sh.out = r[v].out->p;
        sh.scale = scale;
        sh.handle.local_signals = static_cast<uint64_t*>(r[v].pad->p);  // (no error record: the default bound)
        overlap::HopperGemmOptions opt;
        opt.group_m = 2;
        // 8 clusters: every virtual rank's GEMM resident at once with SMs to spare (require below),
        // and 2-3 tiles a CTA, so that most are counted inside the next tile's k-loop (4 k-blocks).
        opt.max_ctas = 16;
        overlap::hopper_gemm(m, n, k, r[v].da->p, k, r[v].db->p, n, r[v].staging->p, n, opt, r[v].s, &sh);
      }
      for (int v = 0; v < V; ++v) {
        const int to = (v + 1) % V;
        for (int j = 1; j < V; ++j) {
          const int p = (v - j + V) % V;
          cudaStream_t ps = r[v].pushers[j - 1];
          for (int g = 0; g < groups; ++g) {
            const size_t at = static_cast<size_t>(p) * slot * 2 + static_cast<size_t>(g) * gbytes;
            cu_check(wait64(reinterpret_cast<CUstream>(ps), reinterpret_cast<CUdeviceptr>(static_cast<uint64_t*>(r[v].done->p) + p * groups + g),
                            per_group, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64");
            SYMMEM_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(r[to].landing->p) + at, static_cast<char*>(r[v].staging->p) + at, gbytes,
                                              cudaMemcpyDeviceToDevice, ps));
            cu_check(write64(reinterpret_cast<CUstream>(ps), reinterpret_cast<CUdeviceptr>(static_cast<uint64_t*>(r[to].pad->p) + p),
                             static_cast<uint64_t>(g) + 1, 0), "cuStreamWriteValue64");
          }
        }
      }
      SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
      std::string w;
      for (int v = 0; v < V && w.empty(); ++v) {
        std::vector<double> ref(slot, 0.0), mag(slot, 0.0);
        for (int q = 0; q < V; ++q)  // rank q's product of block v's rows
          gemm_reference(r[q].a.data() + static_cast<int64_t>(v) * rows * k, r[q].b.data(), rows, k, n, 1, ref.data(), mag.data(), scale);
        for (double& x : mag) x *= V;  // (a rounding to bf16 a step: V - 1 of them)
        w = compare(DataType::kBFloat16, download(r[v].out->p, r[v].out->n), ref, mag);
        if (!w.empty()) w = std::to_string(V) + " virtual ranks, rank " + std::to_string(v) + "'s own block: " + w;
      }
      for (Rank& x : r) {
        cudaStreamDestroy(x.s);
        for (cudaStream_t ps : x.pushers) cudaStreamDestroy(ps);
      }
      if (!w.empty()) throw std::runtime_error(w);
    });
  }
  ASSERT_ALL(why.empty(), why);
}

TEST(Overlap, RowsNotAMultipleOfTheRanksAreRefusedOnEveryRank) {
  const int n = comm().size();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  overlap::TensorParallel tp(comm(), 1024, 256, 256);
  DeviceBuffer a(1024 * 256 * 2), b(256 * 256 * 2), cc(1024 * 256 * 2);
  std::string why = attempt([&] { tp.matmul_reduce_scatter(a.p, 8 * n + 1, 256, b.p, 256, cc.p, ReduceOp::kSum, nullptr); });
  ASSERT_ALL(why.find("not a multiple of the") != std::string::npos, "got '" << why << "'");
}

// The overlap's knobs that every rank must set alike: a value that is no spelling of the knob is
// refused naming the variable, and a knob set on one rank only is refused on every rank by
// TensorParallel's constructor (not a hang in the first operation).
TEST(Overlap, KnobsMisspeltOrUnlikeAcrossRanksAreRefused) {
  const int n = comm().size(), me = comm().rank();
  auto made_under = [&](const char* name, const char* value) {
    ScopedEnv set(name, value);
    return attempt([&] { overlap::TensorParallel tp(comm(), 1024, 256, 256); });
  };
  // Misspelt on rank 0 alone: refused on every rank, naming it (it used to throw on rank 0 alone,
  // leaving the others waiting in the exchange of the constructor until the store's bound).
  std::string why = made_under("SYMMEM_OVERLAP_OWN_SHARED", me == 0 ? "yes" : nullptr);
  ASSERT_ALL(why.find("rank 0 refused: SYMMEM_OVERLAP_OWN_SHARED=yes is neither 0 nor 1") != std::string::npos, "got '" << why << "'");
  // A numeric knob out of range on rank 0 alone, likewise.
  why = made_under("SYMMEM_OVERLAP_DEFER", me == 0 ? "3" : nullptr);
  ASSERT_ALL(why.find("rank 0 refused: SYMMEM_OVERLAP_DEFER=3 is out of range [0, 2]") != std::string::npos, "got '" << why << "'");
  // A rank-local knob misspelt on rank 0 alone, likewise.
  why = made_under("SYMMEM_OVERLAP_GEMM_T", me == 0 ? "yes" : nullptr);
  ASSERT_ALL(why.find("rank 0 refused: SYMMEM_OVERLAP_GEMM_T=yes is neither 0 nor 1") != std::string::npos, "got '" << why << "'");
  if (n < 2) return;
  why = made_under("SYMMEM_OVERLAP_OWN_SHARED", me == 0 ? "1" : "0");
  ASSERT_ALL(why.find("arguments differ across ranks (SYMMEM_OVERLAP_OWN_SHARED)") != std::string::npos, "got '" << why << "'");
  // The ring's parts a step (its signal slots) on rank 0 alone.
  why = made_under("SYMMEM_OVERLAP_RS_CHUNKS", me == 0 ? "4" : nullptr);
  ASSERT_ALL(why.find("arguments differ across ranks (SYMMEM_OVERLAP_RS_CHUNKS)") != std::string::npos, "got '" << why << "'");
  // An argument unlike on the last rank, likewise (it used to surface as the heap's size mismatch).
  why = attempt([&] { overlap::TensorParallel tp(comm(), me == n - 1 ? 2048 : 1024, 256, 256); });
  ASSERT_ALL(why.find("arguments differ across ranks (max_m)") != std::string::npos, "got '" << why << "'");
}
