#include <gtest/gtest.h>

#include "symmem/error.hpp"
#include "symmem/heap.hpp"
#include "symmem/stream.hpp"

using namespace symmem;

TEST(Math, RoundUp) {
  EXPECT_EQ(detail::round_up(0, 256), 0u);
  EXPECT_EQ(detail::round_up(1, 256), 256u);
  EXPECT_EQ(detail::round_up(256, 256), 256u);
  EXPECT_EQ(detail::round_up(257, 2u << 20), 2u << 20);
  EXPECT_EQ(detail::round_up(10, 3), 12u);
}

TEST(Math, CopyGrid) {
  EXPECT_EQ(detail::copy_grid_blocks(8, 512, 132), 1);
  EXPECT_EQ(detail::copy_grid_blocks(512 * 64, 512, 132), 1);
  EXPECT_EQ(detail::copy_grid_blocks(512 * 64 + 1, 512, 132), 2);
  EXPECT_EQ(detail::copy_grid_blocks(size_t(1) << 30, 512, 132), 132);
}

TEST(Math, SignalPadLayout) {
  EXPECT_EQ(pad::barrier_slot(0, 0), pad::kBarrierBase);
  EXPECT_LT(pad::barrier_slot(pad::kBarrierChannels - 1, pad::kMaxTeam - 1), pad::kCounterBase);
  EXPECT_LT(pad::counter_slot(pad::kBarrierChannels - 1), pad::kOpBase);
  EXPECT_LE(pad::kOpBase + pad::kOpSlots, pad::kSlots);
  EXPECT_GE(pad::kBarrierBase, static_cast<size_t>(pad::kUserSlots));
  EXPECT_EQ(pad::kSlots * 8, pad::kBytes);
}

TEST(Checks, SameSizeNamesRanks) {
  EXPECT_EQ(detail::check_same_size({64, 64, 64}, {0, 1, 2}), "");
  std::string m = detail::check_same_size({64, 128}, {4, 5});
  EXPECT_NE(m.find("rank 4 asked 64"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 5 asked 128"), std::string::npos) << m;
}

TEST(Checks, RangeSlotPeer) {
  EXPECT_NO_THROW(detail::check_range("op", "dst_offset", 0, 16, 16));
  EXPECT_NO_THROW(detail::check_range("op", "dst_offset", 16, 0, 16));
  try {
    detail::check_range("stream::put", "dst_offset", 8, 16, 16);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("stream::put: dst_offset + bytes = 8 + 16 runs past"), std::string::npos) << e.what();
  }
  EXPECT_THROW(detail::check_range("op", "o", ~size_t(0), 2, 16), InvalidArgument);
  EXPECT_THROW(detail::check_slot("op", -1), InvalidArgument);
  EXPECT_THROW(detail::check_slot("op", pad::kUserSlots), InvalidArgument);
  EXPECT_NO_THROW(detail::check_slot("op", pad::kUserSlots - 1));
  EXPECT_THROW(detail::check_peer("op", 2, 2), InvalidArgument);
}
