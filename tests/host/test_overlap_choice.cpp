// What overlap's auto mode runs, from the sizes and the team size alone (the same on every rank).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "symmem/overlap.hpp"
#include "../../src/overlap/gemm.hpp"
#include "../../src/overlap/hopper_gemm.hpp"

using symmem::overlap::Mode;
using symmem::overlap::Op;
using symmem::overlap::detail::choose_mode;

TEST(OverlapChoice, OneRankOrSmallShardsRunSequentially) {
  EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, 16384, 4096, 7168, 1), Mode::kSequential);
  EXPECT_EQ(choose_mode(Op::kMatmulReduceScatter, 16384, 7168, 4096, 1), Mode::kSequential);
  EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, 254, 4096, 7168, 2), Mode::kSequential);  // 127 rows a rank
  EXPECT_EQ(choose_mode(Op::kMatmulReduceScatter, 254, 7168, 4096, 2), Mode::kSequential);
}

TEST(OverlapChoice, TheMeasuredTwoGpuShapes) {
  // bench/results/2026-11-26-h200x2-e733139-overlap.json: the only shape where sequential won
  // (70B M 2048) on the first GEMMs; since symmem's own GEMM overlap wins there too
  // (*-h200x2-*-s31c1-*: 556-561 against 618-624 us), and shards of 1024 rows take it.
  for (long long m : {2048LL, 4096LL, 8192LL, 16384LL}) {
    EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, m, 8192, 14336, 2), Mode::kOverlap);       // 70B
    EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, m, 4096, 7168, 2), Mode::kOverlap);        // 8B
    EXPECT_EQ(choose_mode(Op::kMatmulReduceScatter, m, 7168, 4096, 2), Mode::kOverlap);    // 8B
    EXPECT_EQ(choose_mode(Op::kMatmulReduceScatter, m, 14336, 8192, 2), Mode::kOverlap);   // 70B
  }
}

TEST(OverlapChoice, MoreRanksHideMore) {
  // The hidden part grows with (N-1)/N: a shape sequential at 2 ranks (shards too small for the
  // own GEMM: 768 rows) overlaps at 4.
  EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, 1536, 8192, 14336, 2), Mode::kSequential);
  EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, 4096, 8192, 14336 / 2, 4), Mode::kOverlap);
  EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, 2000, 8192, 14336, 2), Mode::kSequential);  // 1000 rows: not whole pairs
}

TEST(OverlapChoice, TheMeasuredFourGpuShapes) {
  // bench/results/2026-11-26-h200x4-e699096-overlap.json: overlap beat the sequential path at every
  // shape of the issue at TP = 4 (0.71-0.94x of it), so auto overlaps them all.
  for (long long m : {2048LL, 4096LL, 8192LL, 16384LL}) {
    EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, m, 4096, 14336 / 4, 4), Mode::kOverlap);      // 8B
    EXPECT_EQ(choose_mode(Op::kMatmulReduceScatter, m, 14336 / 4, 4096, 4), Mode::kOverlap);  // 8B
    EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, m, 8192, 28672 / 4, 4), Mode::kOverlap);      // 70B
    EXPECT_EQ(choose_mode(Op::kMatmulReduceScatter, m, 28672 / 4, 8192, 4), Mode::kOverlap);  // 70B
  }
}

TEST(OverlapChoice, GatherGroupsCoverEveryPeerOnceInArrivalOrder) {
  using symmem::overlap::detail::gather_groups;
  for (int n_ranks = 1; n_ranks <= 8; ++n_ranks)
    for (long long nc : {128LL, 1792LL, 3584LL, 7168LL, 14336LL, 1LL << 20})
      for (long long rows : {0LL, 1LL, 2047LL, 2048LL, 8192LL}) {
        int total = 0;
        for (int g : gather_groups(n_ranks, nc, rows, rows == 1)) {
          EXPECT_GE(g, 1);
          total += g;
        }
        EXPECT_EQ(total, n_ranks - 1) << n_ranks << " ranks, Nc " << nc << ", rows " << rows;
      }
}

TEST(OverlapChoice, GatherGroupsOfTheIssueShapes) {
  using symmem::overlap::detail::gather_groups;
  using V = std::vector<int>;
  // 8B at TP = 4 (Nc 3584), M 8192: a shard's copy takes ~0.56 of its GEMM, so the first peer's
  // rows have landed when the local GEMM ends and the other two when that one ends.
  EXPECT_EQ(gather_groups(4, 14336 / 4, 2048), (V{1, 2}));
  EXPECT_EQ(gather_groups(4, 28672 / 4, 2048), (V{3}));  // 70B: every shard lands within the local GEMM
  EXPECT_EQ(gather_groups(2, 14336 / 2, 4096), (V{1}));
  EXPECT_EQ(gather_groups(8, 14336 / 8, 2048), (V{1, 1, 1, 1, 1, 1, 1}));  // copies slower than GEMMs: one at a time
  EXPECT_EQ(gather_groups(8, 14336 / 4, 2048), (V{1, 2, 4}));
  // Shard GEMMs under a wave: one GEMM each (8B M 2048 and 4096, 70B M 2048 at TP = 4), unless
  // any_size asks for the model's groups.
  EXPECT_EQ(gather_groups(4, 14336 / 4, 512), (V{1, 1, 1}));
  EXPECT_EQ(gather_groups(4, 14336 / 4, 1024), (V{1, 1, 1}));
  EXPECT_EQ(gather_groups(4, 28672 / 4, 512), (V{1, 1, 1}));
  EXPECT_EQ(gather_groups(4, 28672 / 4, 1024), (V{3}));  // 70B M 4096: 7.3 M outputs a shard
  EXPECT_EQ(gather_groups(4, 14336 / 4, 512, true), (V{1, 2}));
  EXPECT_EQ(gather_groups(4, 3072, 64, true), (V{1, 2}));  // the GPU test's wide outputs, grouped
}

// matmul_reduce_scatter's ring: at least two parts a step (a part's copy hides under the next
// part's GEMM), more where K is small (the copy is long against the GEMM), never more parts than
// rows, never more than the signal slots allow.
TEST(OverlapChoice, RingPartsHideTheCopyUnderTheGemms) {
  using symmem::overlap::detail::kMaxRsChunks;
  using symmem::overlap::detail::rs_chunks;
  EXPECT_EQ(rs_chunks(2048, 3584), 2);   // 8B, TP = 4
  EXPECT_EQ(rs_chunks(4096, 7168), 2);   // 70B / 8B at TP = 2
  EXPECT_EQ(rs_chunks(2048, 1792), 3);   // 8B, TP = 8: a copy a little longer than its GEMM
  EXPECT_EQ(rs_chunks(1024, 256), kMaxRsChunks);
  EXPECT_EQ(rs_chunks(3, 256), 3);
  EXPECT_EQ(rs_chunks(1, 4096), 1);
  // SYMMEM_OVERLAP_RS_CHUNKS: that many parts, within the same bounds.
  EXPECT_EQ(rs_chunks(4096, 7168, 4), 4);
  EXPECT_EQ(rs_chunks(4096, 7168, 1), 1);
  EXPECT_EQ(rs_chunks(3, 7168, 8), 3);
  for (int64_t rows : {1, 2, 5, 64, 4096})
    for (int64_t k : {8, 1000, 2000, 2001, 65536}) {
      const int c = rs_chunks(rows, k);
      EXPECT_GE(c, 1);
      EXPECT_LE(c, kMaxRsChunks);
      EXPECT_LE(c, rows);
      if (rows >= 2) EXPECT_GE(c, 2);
    }
}

// The ring where its parts fill a wave (and always at 2 ranks); the GEMMs and a sum kernel below.
TEST(OverlapChoice, RingWhereItsPartsFillTheGpu) {
  using symmem::overlap::detail::rs_ring;
  for (int64_t rows : {1, 64, 512, 8192}) EXPECT_TRUE(rs_ring(2, rows, 4096, 7168));
  EXPECT_TRUE(rs_ring(4, 4096, 4096, 3584));    // 8B M 16384: 2048-row parts, 256 tiles of 128 x 256
  EXPECT_FALSE(rs_ring(4, 2048, 4096, 3584));   // 8B M 8192: 1024-row parts, 128 tiles
  EXPECT_FALSE(rs_ring(4, 512, 4096, 3584));    // 8B M 2048
  EXPECT_FALSE(rs_ring(4, 4096, 8192, 7168));   // 70B M 16384: 2048 x 8192 parts, the sum form (session 36)
  EXPECT_TRUE(rs_ring(4, 2048, 8192, 7168));    // 70B M 8192
  EXPECT_FALSE(rs_ring(4, 1024, 8192, 7168));   // 70B M 4096
  EXPECT_FALSE(rs_ring(8, 2048, 4096, 1792));   // 8B M 16384 at TP = 8: three parts of ~683 rows
}

// symmem's own GEMM for all_gather_matmul: from shards of 1024 rows (at 2 ranks, of 2^23 outputs;
// measured on 2 and 4 x H200), in multiples of its 256-row cluster pairs, at any team size of 2 or
// more.
TEST(OverlapChoice, OwnGemmWhereMeasured) {
  using symmem::overlap::detail::gather_own_gemm;
  EXPECT_TRUE(gather_own_gemm(2, 1024, 14336));   // 70B M 2048
  EXPECT_FALSE(gather_own_gemm(2, 1024, 7168));   // 8B M 2048: lost 5% on random operands (session 31)
  EXPECT_TRUE(gather_own_gemm(2, 2048, 7168));    // 8B M 4096
  EXPECT_TRUE(gather_own_gemm(2, 8192, 7168));    // M 16384
  EXPECT_FALSE(gather_own_gemm(2, 512, 14336));
  EXPECT_FALSE(gather_own_gemm(2, 1000, 14336));  // not whole cluster pairs
  EXPECT_TRUE(gather_own_gemm(4, 2048, 3584));    // TP = 4, M 8192
  EXPECT_TRUE(gather_own_gemm(4, 1024, 3584));    // TP = 4, M 4096
  EXPECT_FALSE(gather_own_gemm(4, 512, 7168));    // TP = 4, M 2048: 8B lost
  EXPECT_TRUE(gather_own_gemm(8, 1024, 1792));    // TP = 8, M 8192 (unmeasured)
  EXPECT_FALSE(gather_own_gemm(1, 4096, 7168));
}

// The own forms' GEMM in transposed tiles (hopper_gemm_t) where the walk model favours them: as
// measured in the operations at TP = 2 (2 x H200, session 58, both ways round, twice).
TEST(OverlapChoice, TransposedTilesWhereTheirWalkIsNoLonger) {
  using symmem::overlap::detail::gather_transposed;
  using symmem::overlap::detail::reduce_transposed;
  EXPECT_TRUE(gather_transposed(2, 8192, 7168, 132));    // 8B TP = 2, M 16384: 3-5% faster
  EXPECT_TRUE(gather_transposed(2, 4096, 7168, 132));    // 8B, M 8192: 1-2% faster
  EXPECT_TRUE(gather_transposed(2, 8192, 14336, 132));   // 70B, M 16384: level to 2.5% faster
  EXPECT_TRUE(gather_transposed(2, 4096, 14336, 132));   // 70B, M 8192 (24 tall tiles): 0.6-2% faster
  EXPECT_FALSE(gather_transposed(4, 2048, 3584, 132));   // 8B TP = 4, M 8192 (unmeasured; the model 1.022)
  EXPECT_FALSE(gather_transposed(4, 2048, 7168, 132));   // 70B TP = 4, M 8192 (unmeasured; 1.027)
  EXPECT_FALSE(gather_transposed(2, 256, 14336, 132));   // small shards: 128-row tiles, 1.078
  EXPECT_TRUE(reduce_transposed(2, 8192, 8192, 14336, 132));   // 70B mm+rs, M 16384: level (GEMM alone 2.8% faster)
  EXPECT_FALSE(reduce_transposed(2, 4096, 8192, 14336, 132));  // M 8192: 2.5-3.5% slower (session 59)
  EXPECT_FALSE(reduce_transposed(2, 4096, 4096, 7168, 132));   // 8B, M 8192: 1% faster at the cap, 3.8% slower after idle (session 67)
  EXPECT_TRUE(reduce_transposed(2, 8192, 4096, 7168, 132));    // 8B, M 16384
  // 3+ ranks, blocks of 2048 rows or more: the transposed tiles (session 63, the forms looped back
  // on one H200 with the fused sum's partials outside the stage ring: 2.5-9% ahead); below, the
  // walks (hopper_gemm's tiles, as the loopback has them too).
  EXPECT_TRUE(reduce_transposed(4, 2048, 8192, 7168, 132));    // 70B TP = 4, M 8192: 1.010-1.025 against 1.037-1.044
  EXPECT_TRUE(reduce_transposed(4, 2048, 4096, 3584, 132));    // 8B TP = 4, M 8192: 1.011-1.017 against 1.041-1.042
  EXPECT_TRUE(reduce_transposed(4, 4096, 4096, 3584, 132));    // 8B TP = 4, M 16384: 1.070-1.078 against 1.103-1.108
  EXPECT_TRUE(reduce_transposed(8, 2048, 8192, 3584, 132));    // 70B TP = 8, M 16384: 1.044 against 1.131
  EXPECT_FALSE(reduce_transposed(4, 512, 4096, 3584, 132));    // 8B TP = 4, M 2048: 1.253 against 1.092
  // The fused forms' raster: 8 where C is 8192 columns or wider (70B), 2 below (session 64).
  EXPECT_EQ(symmem::overlap::detail::reduce_raster(8192), 8);
  EXPECT_EQ(symmem::overlap::detail::reduce_raster(4096), 2);
  EXPECT_FALSE(reduce_transposed(4, 1024, 8192, 7168, 132));   // 70B TP = 4, M 4096: 1.046 against 1.025
}

// The fused form's row groups: 512 rows, or 256 where a block is an odd number of 256-row units.
TEST(OverlapChoice, FusedReduceScatterRowGroups) {
  using symmem::overlap::detail::rs_groups;
  EXPECT_EQ(rs_groups(256), 1);
  EXPECT_EQ(rs_groups(512), 1);
  EXPECT_EQ(rs_groups(768), 3);
  EXPECT_EQ(rs_groups(1024), 2);
  EXPECT_EQ(rs_groups(2048), 4);   // 8B / 70B M 8192 at TP = 4
  EXPECT_EQ(rs_groups(4096), 8);
  for (int64_t rows = 256; rows <= 16384; rows += 256) {
    const int g = rs_groups(rows);
    EXPECT_EQ(rows % g, 0);
    EXPECT_EQ(rows / g % 256, 0);
  }
}

// matmul_reduce_scatter's fused form (symmem's own GEMM, the sum in its own block's tiles): where K
// is long, at 3 ranks and more (4 x H100, session 37: faster at every 70B shape at TP = 4, K 7168;
// slower at every 8B one, K 3584); at 2 ranks where a rank has 4096 rows or more (2 x H200, session
// 55: 70B M 8192 and 16384 ahead of the cuBLASLt ring in six runs, both orders, M 4096 behind;
// session 59: 8B too, once the count writes after the GEMM were gone). SYMMEM_OVERLAP_GEMM forces it.
TEST(OverlapChoice, OwnGemmReduceScatterWhereKIsLong) {
  using symmem::overlap::detail::reduce_own_gemm;
  for (int64_t rows : {512, 1024, 2048, 4096}) EXPECT_TRUE(reduce_own_gemm(4, rows, 8192, 7168)) << rows;  // 70B at TP = 4: 384-3058 us against 393-3085
  // 8B at TP = 4 (K 3584): session 37 lost (M 8192 406 us against 396) on hopper_gemm's fused form
  // with a barrier and the count writes after its GEMM; since session 63 M 8192, where the sum form
  // would run, takes the fused form (looped back 1.01-1.02x against the sum form's measured
  // 1.15-1.18x); M 16384 keeps the ring, smaller blocks the sum form.
  EXPECT_FALSE(reduce_own_gemm(4, 512, 4096, 3584));
  EXPECT_FALSE(reduce_own_gemm(4, 1024, 4096, 3584));
  EXPECT_TRUE(reduce_own_gemm(4, 2048, 4096, 3584));
  EXPECT_FALSE(reduce_own_gemm(4, 4096, 4096, 3584));   // (rs_ring: 2048-row parts)
  EXPECT_FALSE(reduce_own_gemm(8, 2048, 4096, 1792));   // 8B at TP = 8: K 1792 (looped back 1.17x)
  EXPECT_TRUE(reduce_own_gemm(2, 4096, 4096, 7168));     // TP = 2, 8B M 8192: fused in transposed tiles 0-2% ahead of the ring
  EXPECT_TRUE(reduce_own_gemm(2, 8192, 4096, 7168));     // TP = 2, 8B M 16384: 2.6-4.5% ahead (session 59)
  EXPECT_FALSE(reduce_own_gemm(2, 2048, 4096, 7168));    // TP = 2, 8B M 4096: small blocks
  EXPECT_FALSE(reduce_own_gemm(2, 2048, 8192, 14336));   // TP = 2, 70B M 4096: the ring (fused ~1% slower)
  EXPECT_TRUE(reduce_own_gemm(2, 4096, 8192, 14336));    // TP = 2, 70B M 8192: fused 0.996-1.040 x the GEMM, the ring 0.994-1.087
  EXPECT_TRUE(reduce_own_gemm(2, 8192, 8192, 14336));    // TP = 2, 70B M 16384: fused 0.986-1.005, the ring 1.014-1.035
  EXPECT_TRUE(reduce_own_gemm(3, 2048, 8192, 6144));     // the threshold
  EXPECT_FALSE(reduce_own_gemm(8, 2048, 8192, 3584));    // 70B at TP = 8
}

// The form a call takes (TensorParallel::form, which the operations run): the mode, the shape,
// the dtype and the facts fixed at construction (the GPUs, SYMMEM_OVERLAP_GEMM / _RS).
TEST(OverlapChoice, TheFormOfACall) {
  using symmem::DataType;
  using symmem::overlap::Form;
  using symmem::overlap::form_name;
  using symmem::overlap::detail::choose_form;
  using symmem::overlap::detail::FormFacts;
  const auto bf = DataType::kBFloat16, fp16 = DataType::kFloat16;
  const auto facts = [](int n, bool own_ok, int own_gemm = -1, int force_rs = -1, int own_rs = -1) {
    FormFacts f;
    f.nranks = n;
    f.own_ok = own_ok;
    f.own_gemm = own_gemm;
    f.force_rs = force_rs;
    f.own_rs = own_rs;
    return f;
  };
  const Op ag = Op::kAllGatherMatmul, rs = Op::kMatmulReduceScatter;
  // One rank, or sequential asked (or chosen: 127 rows a rank): the sequential path.
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 16384, 4096, 7168, bf, facts(1, true)), Form::kSequential);
  EXPECT_EQ(choose_form(rs, Mode::kSequential, 16384, 7168, 4096, bf, facts(4, true)), Form::kSequential);
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 254, 7168, 4096, bf, facts(2, true)), Form::kSequential);
  // all_gather_matmul: the own GEMM where it can run and fits (bf16, whole 256-row units, 1024-row
  // shards at 4 ranks); cuBLASLt's GEMMs otherwise; SYMMEM_OVERLAP_GEMM forces either where it fits.
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 8192, 4096, 3584, bf, facts(4, true)), Form::kOwnGather);
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 8192, 4096, 3584, bf, facts(4, false)), Form::kCublasGather);
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 8192, 4096, 3584, fp16, facts(4, true, 1)), Form::kCublasGather);
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 8192, 4096, 3584, bf, facts(4, true, 0)), Form::kCublasGather);
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 2048, 4096, 3584, bf, facts(4, true)), Form::kCublasGather);    // 512-row shards
  EXPECT_EQ(choose_form(ag, Mode::kOverlap, 2048, 4096, 3584, bf, facts(4, true, 1)), Form::kOwnGather);  // forced
  EXPECT_EQ(choose_form(ag, Mode::kOverlap, 4 * 1100, 4096, 3584, bf, facts(4, true, 1)), Form::kCublasGather);  // not 256-row units
  // matmul_reduce_scatter: fused where every rank can run it and K is long (3+ ranks), or a block
  // has 2048+ rows and the sum form would run (in transposed tiles from 2048 rows at 3+ ranks);
  // else the ring at 2 ranks and where a part has 2^23 to 2^24 outputs, the sum form elsewhere.
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 7168, 8192, bf, facts(4, true)), Form::kFusedT);     // 70B, TP = 4
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 4096, 7168, 8192, bf, facts(4, true)), Form::kFused);      // 70B, TP = 4, M 4096
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 7168, 8192, bf, facts(4, false)), Form::kRing);      // its part: 2^23
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 7168, 8192, fp16, facts(4, true)), Form::kRing);
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 3584, 4096, bf, facts(4, true)), Form::kFusedT);     // 8B M 8192
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 3584, 4096, bf, facts(4, true, 0)), Form::kSum);     // SYMMEM_OVERLAP_GEMM=cublas
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 4096, 3584, 4096, bf, facts(4, true)), Form::kSum);        // 8B M 4096
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 16384, 3584, 4096, bf, facts(4, true)), Form::kRing);      // 8B M 16384
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 16384, 3584, 4096, bf, facts(4, true, -1, 0)), Form::kSum);  // SYMMEM_OVERLAP_RS=sum
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 3584, 4096, bf, facts(4, true, 0, 1)), Form::kRing);  // SYMMEM_OVERLAP_RS=ring (GEMM=cublas)
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 3584, 4096, bf, facts(2, true, -1, 0)), Form::kRing);  // 2 ranks: the ring
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 14336, 8192, bf, facts(2, true)), Form::kFused);     // 70B, TP = 2, M 8192
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 4096, 14336, 8192, bf, facts(2, true)), Form::kRing);      // 70B, TP = 2, M 4096
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 14336, 8192, bf, facts(2, false)), Form::kRing);     // a rank cannot
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 14336, 8192, bf, facts(2, true, 1)), Form::kFused);  // SYMMEM_OVERLAP_GEMM=own
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 7168, 8192, bf, facts(4, true, 0)), Form::kRing);    // SYMMEM_OVERLAP_GEMM=cublas
  // SYMMEM_OVERLAP_OWN_RS=ring / fused: that own-GEMM form wherever the own GEMM fits (8B too),
  // unless SYMMEM_OVERLAP_GEMM=cublas; nothing where it does not fit or for all_gather_matmul.
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 3584, 4096, bf, facts(4, true, -1, -1, 1)), Form::kOwnRing);   // 8B M 8192
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 7168, 8192, bf, facts(4, true, 1, -1, 1)), Form::kOwnRing);    // 70B, GEMM=own
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 14336, 8192, bf, facts(2, true, -1, -1, 0)), Form::kFused);    // TP = 2, fused asked
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 3584, 4096, bf, facts(4, true, 0, -1, 1)), Form::kSum);        // GEMM=cublas
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 3584, 4096, bf, facts(4, false, -1, -1, 1)), Form::kSum);      // a rank cannot
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 3584, 4096, fp16, facts(4, true, -1, -1, 1)), Form::kSum);     // fp16
  EXPECT_EQ(choose_form(rs, Mode::kSequential, 8192, 3584, 4096, bf, facts(4, true, -1, -1, 1)), Form::kSequential);
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 8192, 4096, 3584, bf, facts(4, true, -1, -1, 1)), Form::kOwnGather);
  EXPECT_STREQ(form_name(Form::kOwnRing), "epilogue ring (the own GEMM)");
  // all_gather_matmul's own form in transposed tiles where gather_transposed says, or forced
  // (SYMMEM_OVERLAP_GEMM_T: own_t), on the SMs the own GEMM may hold.
  FormFacts t = facts(2, true);
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 16384, 4096, 7168, bf, t), Form::kOwnGatherT);  // 8B TP = 2, M 16384
  FormFacts t4 = facts(4, true);
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 8192, 4096, 3584, bf, t4), Form::kOwnGather);   // 8B TP = 4, M 8192
  t.own_t = 0;
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 16384, 4096, 7168, bf, t), Form::kOwnGather);
  t4.own_t = 1;
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 8192, 4096, 3584, bf, t4), Form::kOwnGatherT);
  EXPECT_EQ(choose_form(ag, Mode::kAuto, 8192, 4096, 7168, bf, facts(2, false)), Form::kCublasGather);  // (own_t only picks the own GEMM's tiles)
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 4096, 7168, 4096, bf, t), Form::kRing);  // (and only all_gather_matmul's)
  // matmul_reduce_scatter's fused form likewise (reduce_transposed, SYMMEM_OVERLAP_RS_GEMM_T: rs_t),
  // never its epilogue ring nor the cuBLASLt forms.
  FormFacts r = facts(2, true);
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 16384, 14336, 8192, bf, r), Form::kFusedT);  // 70B TP = 2, M 16384
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 14336, 8192, bf, r), Form::kFused);    // M 8192
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 16384, 7168, 4096, bf, r), Form::kFusedT);   // 8B M 16384 (K < 10240)
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 7168, 4096, bf, r), Form::kFused);     // M 8192: hopper_gemm's tiles (session 67)
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 4096, 7168, 4096, bf, r), Form::kRing);      // M 4096
  r.rs_t = 0;
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 16384, 14336, 8192, bf, r), Form::kFused);
  r.rs_t = 1;
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 8192, 14336, 8192, bf, r), Form::kFusedT);
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 4096, 7168, 4096, bf, r), Form::kRing);      // (8B M 4096: not fused)
  r.own_rs = 1;
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 16384, 14336, 8192, bf, r), Form::kOwnRing);
  r.own_rs = 0;
  EXPECT_EQ(choose_form(rs, Mode::kAuto, 16384, 7168, 4096, bf, r), Form::kFusedT);   // (fused asked, 8B too)
  EXPECT_STREQ(form_name(Form::kOwnGatherT), "the own GEMM over row shards, transposed 160 x 128 tiles");
  EXPECT_STREQ(form_name(Form::kFusedT), "fused (the own GEMM, transposed 160 x 128 tiles)");
  EXPECT_STREQ(form_name(Form::kFused), "fused (the own GEMM)");
  EXPECT_STREQ(form_name(static_cast<Form>(99)), "invalid");
}

// The GEMM tuner's choice from the candidates' median times (cuBLASLt's order): the heuristic's
// first that ran stays unless another runs more than 3% faster, then the fastest such one.
TEST(OverlapChoice, GemmTunerKeepsTheFirstUnlessAnotherIsClearlyFaster) {
  using symmem::overlap::Gemm;
  EXPECT_EQ(Gemm::choose({}), 0u);
  EXPECT_EQ(Gemm::choose({-1, -1}), 2u);                    // none ran
  EXPECT_EQ(Gemm::choose({100, 98, 99}), 0u);               // within the margin
  EXPECT_EQ(Gemm::choose({1450, 1406, 1338, 1401}), 2u);   // session 56's 16384 x 4096 x 7168
  EXPECT_EQ(Gemm::choose({-1, 100, 95, 96}), 2u);           // the first that ran is the reference
  EXPECT_EQ(Gemm::choose({100, 96, 97}), 1u);               // 4% faster
  EXPECT_EQ(Gemm::choose({100, 96, -1, 90}), 3u);           // the fastest of those past the margin
}

// hopper_gemm_t's done targets (the fused form on it, EXPERIMENTAL): a row group's word reaches its
// overlapping row tiles (`tall` of 160 rows, then 128) x the CTAs of a row of tiles, counted here
// tile by tile; every tile of a shard overlaps one or two groups, and the groups' targets sum to
// the tiles' overlaps.
TEST(OverlapChoice, TransposedGroupCountsMatchTheTilesThatOverlapEachGroup) {
  using symmem::overlap::hopper_t_group_count;
  for (int64_t rows : {256, 768, 1024, 2048, 8192})
    for (int64_t groups : {1, 2, 3, 4, 16})
      for (int64_t n : {384, 512, 4096, 7168})
        for (int tall : {-1, 0, 1, 3, 40}) {
          if (rows % groups != 0) continue;
          const int64_t grows = rows / groups, ctas = 2 * ((n + 255) / 256);
          const int64_t t_all = (rows + 159) / 160, t160 = tall < 0 || tall > t_all ? t_all : tall;
          std::vector<uint64_t> want(groups, 0);
          for (int64_t r0 = 0, t = 0; r0 < rows; ++t) {
            const int64_t h = t < t160 ? 160 : 128;
            const int64_t g0 = r0 / grows, g1 = (std::min(r0 + h, rows) - 1) / grows;
            for (int64_t g = g0; g <= g1; ++g) want[g] += ctas;
            r0 += h;
          }
          for (int64_t g = 0; g < groups; ++g)
            EXPECT_EQ(hopper_t_group_count(rows, grows, g, n, tall), want[g])
                << rows << " rows, " << groups << " groups, n " << n << ", tall " << tall << ", group " << g;
        }
}

// With the straddle (2 shards whose rows leave 1-80 over whole 160-row tiles): shard 0's tiles from
// row 0 and its last rows in the straddle, shard 1's first rows in the straddle and its tiles from
// there on; each counted where it overlaps.
TEST(OverlapChoice, StraddleGroupCountsMatchTheTilesThatOverlapEachGroup) {
  using symmem::overlap::hopper_t_group_count;
  for (int64_t rows : {512, 560, 1024, 8192})
    for (int64_t groups : {1, 2, 4, 16})
      for (int64_t n : {384, 4096}) {
        if (rows % groups != 0) continue;
        const int64_t grows = rows / groups, ctas = 2 * ((n + 255) / 256), s = rows % 160, whole = rows / 160;
        for (int shard = 0; shard < 2; ++shard) {
          std::vector<std::pair<int64_t, int64_t>> tiles;  // [r0, r1)
          const int64_t shift = shard == 1 ? s : 0;
          for (int64_t t = 0; t < whole; ++t) tiles.push_back({shift + 160 * t, shift + 160 * t + 160});
          tiles.push_back(shard == 0 ? std::pair{rows - s, rows} : std::pair{int64_t{0}, s});
          std::vector<uint64_t> want(groups, 0);
          for (auto [r0, r1] : tiles)
            for (int64_t g = r0 / grows; g <= (r1 - 1) / grows; ++g) want[g] += ctas;
          for (int64_t g = 0; g < groups; ++g)
            EXPECT_EQ(hopper_t_group_count(rows, grows, g, n, 0, static_cast<int>(s), shard), want[g])
                << rows << " rows, " << groups << " groups, n " << n << ", shard " << shard << ", group " << g;
        }
      }
}
