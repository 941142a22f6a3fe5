// What overlap's auto mode runs, from the sizes and the team size alone (the same on every rank).
#include <gtest/gtest.h>

#include "symmem/overlap.hpp"

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
  // bench/results/2026-11-26-h200x2-e733139-overlap.json: the only shape where sequential won.
  EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, 2048, 8192, 14336, 2), Mode::kSequential);  // 70B
  for (long long m : {4096LL, 8192LL, 16384LL}) EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, m, 8192, 14336, 2), Mode::kOverlap);
  for (long long m : {2048LL, 4096LL, 8192LL, 16384LL}) {
    EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, m, 4096, 7168, 2), Mode::kOverlap);        // 8B
    EXPECT_EQ(choose_mode(Op::kMatmulReduceScatter, m, 7168, 4096, 2), Mode::kOverlap);    // 8B
    EXPECT_EQ(choose_mode(Op::kMatmulReduceScatter, m, 14336, 8192, 2), Mode::kOverlap);   // 70B
  }
}

TEST(OverlapChoice, MoreRanksHideMore) {
  // The hidden part grows with (N-1)/N: a shape sequential at 2 ranks overlaps at 4.
  EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, 2048, 8192, 14336, 2), Mode::kSequential);
  EXPECT_EQ(choose_mode(Op::kAllGatherMatmul, 4096, 8192, 14336 / 2, 4), Mode::kOverlap);
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
