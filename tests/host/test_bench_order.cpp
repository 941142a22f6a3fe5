// The order of graphs replayed in turn (bench/round_order.hpp, symmem-bench and the probes): each
// round a permutation drawn from its number alone, and over the rounds every program right after
// every other about equally often (what a power-capped GPU ran just before moves its clock).
#include <gtest/gtest.h>

#include <algorithm>

#include "../../bench/round_order.hpp"

using symmem::bench::round_order;

TEST(BenchOrder, EachRoundIsAPermutationFromItsNumberAlone) {
  for (size_t p : {1u, 2u, 4u, 6u}) {
    for (int r = 0; r < 50; ++r) {
      std::vector<size_t> o = round_order(p, r);
      EXPECT_EQ(o, round_order(p, r));  // (every rank draws the same)
      std::sort(o.begin(), o.end());
      for (size_t i = 0; i < p; ++i) EXPECT_EQ(o[i], i);
    }
  }
}

TEST(BenchOrder, EveryProgramFollowsEveryOtherAboutEquallyOften) {
  // 4 programs (the probe's four graphs), 400 rounds: 1200 adjacencies inside rounds over 12
  // ordered pairs, 100 each if even; a fixed rotation gives 4 of the pairs all 1200.
  const size_t p = 4;
  const int rounds = 400;
  std::vector<int> after(p * p, 0);
  for (int r = 0; r < rounds; ++r) {
    const std::vector<size_t> o = round_order(p, r);
    for (size_t i = 1; i < p; ++i) ++after[o[i - 1] * p + o[i]];
  }
  for (size_t a = 0; a < p; ++a)
    for (size_t b = 0; b < p; ++b)
      if (a != b) EXPECT_NEAR(after[a * p + b], 100, 35) << "program " << b << " right after " << a;
  // And the first program of a round is each about equally often.
  std::vector<int> first(p, 0);
  for (int r = 0; r < rounds; ++r) ++first[round_order(p, r)[0]];
  for (size_t a = 0; a < p; ++a) EXPECT_NEAR(first[a], rounds / 4, 40) << "program " << a << " first";
}
