// symmem-bench's clock log (bench/clocks.hpp): each program's statistics from the samples inside
// its replays, and a log that is off, with its reason, where NVML or a GPU is missing.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../../bench/clocks.hpp"

using symmem::bench::clock_stats;
using symmem::bench::ClockLog;
using symmem::bench::ClockSample;

TEST(BenchClocks, StatsTakeTheSamplesInsideTheWindows) {
  std::vector<ClockSample> s;
  for (int i = 0; i < 10; ++i) s.push_back({static_cast<double>(i), 1000.0 + 10 * i, 600.0 + i, i >= 5, true});
  // Samples 2-4 and 7-8: clocks 1020-1040, 1070-1080; power 602-604, 607-608; 2 of 5 capped.
  const auto st = clock_stats(s, {{2, 4}, {7, 8}});
  EXPECT_EQ(st.samples, 5);
  EXPECT_DOUBLE_EQ(st.sm_mhz, 1040);
  EXPECT_DOUBLE_EQ(st.power_w, 604);
  EXPECT_DOUBLE_EQ(st.capped_share, 0.4);
  const auto none = clock_stats(s, {{20, 30}});
  EXPECT_EQ(none.samples, 0);
  EXPECT_EQ(none.sm_mhz, -1);
  EXPECT_EQ(none.power_w, -1);
  EXPECT_EQ(none.capped_share, -1);
  EXPECT_EQ(clock_stats({}, {{0, 1}}).samples, 0);
  s[3].capped_known = false;  // (a driver that does not say: no share)
  EXPECT_EQ(clock_stats(s, {{2, 4}}).capped_share, -1);
  EXPECT_DOUBLE_EQ(clock_stats(s, {{5, 6}}).capped_share, 1);
}

TEST(BenchClocks, ALogThatCannotSampleSaysWhyAndReturnsNothing) {
  ClockLog log(0, 200);
  if (log.enabled()) {  // (a GPU machine: a few samples, each with a clock)
    log.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto s = log.stop();
    ASSERT_FALSE(s.empty());
    EXPECT_GT(s.front().sm_mhz, 0);
    EXPECT_TRUE(log.stop().empty());
    return;
  }
  EXPECT_FALSE(log.why_not().empty());
  log.start();  // (no-ops)
  EXPECT_TRUE(log.stop().empty());
  EXPECT_EQ(log.power_limit_w(), -1);
}
