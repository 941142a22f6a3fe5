#include <gtest/gtest.h>

#include <random>

#include "symmem/device/workspace.hpp"

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

// The sequenced workspace (include/symmem/device/workspace.hpp): flags never 0, a flag repeats in
// the same parity only after both cleaning operations, and LL and push regions never share bytes.
TEST(Workspace, FlagsNeverZeroAndCleanBeforeTheyRepeat) {
  using symmem::ws::cleans;
  using symmem::ws::flag_of;
  using symmem::ws::kLLFlagMax;
  EXPECT_EQ(kLLFlagMax, 0xFFFFu);  // 16 bits: the top of each 64-bit word of a line (ll.cuh)
  EXPECT_EQ(flag_of(1), 1u);
  EXPECT_EQ(flag_of(0xFFFF), 0xFFFFu);
  EXPECT_EQ(flag_of(0x10000), 1u);  // wraps to 1, never 0
  for (uint64_t e = 1; e < 3 * 0x10000ull; ++e) {
    ASSERT_NE(flag_of(e), 0u) << e;
    ASSERT_LE(flag_of(e), kLLFlagMax) << e;
  }
  // The first epoch e' > e of e's parity with e's flag is e + 2 (2^16 - 1); between them e's
  // parity has an operation that cleans (two in every 2 (2^16 - 1) epochs, one of each flag).
  const uint64_t period = 2 * 0xFFFFull;
  for (uint64_t e : {1ull, 2ull, 12345ull, 0xFFFEull, 0xFFFFull, 0x10000ull, 0x1FFFDull}) {
    EXPECT_EQ(flag_of(e + period), flag_of(e));
    for (uint64_t x = e + 1; x < e + period; ++x) ASSERT_NE(flag_of(x) == flag_of(e) && (x & 1) == (e & 1), true) << e;
    int cleaned[2] = {0, 0};
    for (uint64_t x = e + 1; x < e + period; ++x)
      if (cleans(x)) ++cleaned[x & 1];
    EXPECT_GE(cleaned[e & 1], 1) << e;
    EXPECT_EQ(cleaned[0] + cleaned[1], 4 - (cleans(e) ? 1 : 0)) << e;
  }
  EXPECT_FALSE(cleans(12345));
  EXPECT_FALSE(cleans(0x10000));
}

// The LL line formats (workspace.hpp, used by ll.cuh): 12 (8) payload bytes round-trip for any bits,
// a line carries exactly the flag it was stored with (never another, never 0 from zeroed memory),
// and payload bits never reach the flag bits.
TEST(Workspace, LLLinesRoundTripAndCarryOnlyTheirFlag) {
  using namespace symmem::ws;
  std::mt19937_64 g(7);
  const uint32_t edge[] = {0u, 1u, 0xFFFFu, 0x10000u, 0x7FFFFFFFu, 0xFFFFFFFFu};
  for (int it = 0; it < 20000; ++it) {
    const uint32_t a = it < 216 ? edge[it % 6] : static_cast<uint32_t>(g());
    const uint32_t b = it < 216 ? edge[it / 6 % 6] : static_cast<uint32_t>(g());
    const uint32_t c = it < 216 ? edge[it / 36 % 6] : static_cast<uint32_t>(g());
    const uint32_t flag = 1 + static_cast<uint32_t>(g() % kLLFlagMax);
    const LLWords l = ll_encode(a, b, c, flag);
    ASSERT_EQ(ll_word(l, 0), a);
    ASSERT_EQ(ll_word(l, 1), b);
    ASSERT_EQ(ll_word(l, 2), c);
    ASSERT_TRUE(ll_carries(l, flag));
    const uint32_t other = flag % kLLFlagMax + 1;  // another valid flag
    ASSERT_FALSE(ll_carries(l, other));
    ASSERT_EQ(ll_seen_flag(l, other), flag);
    // A line torn between two stores (one word from each) carries neither flag.
    const LLWords o = ll_encode(a, b, c, other);
    ASSERT_FALSE(ll_carries(LLWords{l.w0, o.w1}, flag));
    ASSERT_FALSE(ll_carries(LLWords{l.w0, o.w1}, other));
    // Narrow lines: a and b round-trip, with the same flag in the same bits.
    const LLWords n = ll_encode<kLLNarrow>(a, b, c, flag);
    ASSERT_EQ(ll_word<kLLNarrow>(n, 0), a);
    ASSERT_EQ(ll_word<kLLNarrow>(n, 1), b);
    ASSERT_TRUE(ll_carries(n, flag));
    ASSERT_FALSE(ll_carries(n, other));
    ASSERT_EQ(ll_seen_flag(n, other), flag);
    const LLWords no = ll_encode<kLLNarrow>(a, b, c, other);
    ASSERT_FALSE(ll_carries(LLWords{n.w0, no.w1}, flag));
  }
  for (uint32_t flag = 1; flag <= kLLFlagMax; ++flag) ASSERT_FALSE(ll_carries(LLWords{0, 0}, flag));  // zeroed slots
  static_assert(ll_lines(0) == 0 && ll_lines(1) == 1 && ll_lines(12) == 1 && ll_lines(13) == 2, "lines of 12 bytes");
  static_assert(ll_lines<kLLNarrow>(8) == 1 && ll_lines<kLLNarrow>(9) == 2, "lines of 8 bytes");
}

// The format choice (the same on every rank: a function of the size and the layout): narrow up to
// kLLNarrowMaxBytes where its lines fit the slot, wide above and where they do not.
TEST(Workspace, LLFormatFollowsSizeAndSlot) {
  using namespace symmem::ws;
  const size_t slot = Layout::make(4, 1 << 20, 2 << 20).ll_slot_lines;
  EXPECT_EQ(ll_payload_for(8, slot), kLLNarrow);
  EXPECT_EQ(ll_payload_for(kLLNarrowMaxBytes, slot), kLLNarrow);
  EXPECT_EQ(ll_payload_for(kLLNarrowMaxBytes + 1, slot), kLLPayload);
  EXPECT_EQ(ll_payload_for(1 << 20, slot), kLLPayload);
  // A workspace whose slots hold 12 KiB wide (1024 lines) holds 8 KiB narrow: 9 KiB goes wide.
  const size_t small = Layout::make(4, 12 * 1024, 24 * 1024).ll_slot_lines;
  EXPECT_EQ(ll_payload_for(8 * 1024, small), kLLNarrow);
  EXPECT_EQ(ll_payload_for(9 * 1024, small), kLLPayload);
  EXPECT_EQ(ll_payload_for(8 * 1024, small, 2), kLLPayload);
}

TEST(Workspace, RegionsAreDisjoint) {
  const auto L = symmem::ws::Layout::make(8, 1 << 20, 2 << 20);
  EXPECT_EQ(L.ll_slot_lines, ((size_t(1) << 20) + 11) / 12);  // 12 payload bytes a line
  // LL slots tile [0, ll_region), push stages tile [ll_region, bytes).
  EXPECT_EQ(L.ll_offset(1, 7) + L.ll_slot_lines * 16, L.ll_region());
  EXPECT_EQ(L.stage_offset(0, 0), L.ll_region());
  EXPECT_EQ(L.stage_offset(1, 7) + L.stage_bytes, L.bytes());
  EXPECT_EQ(L.bytes(), 2 * 8 * L.ll_slot_lines * 16 + size_t(2) * 8 * (2 << 20));
}

TEST(Math, CheckedSizesNameWhatOverflowed) {
  EXPECT_EQ(detail::checked_round_up(257, 256, "x"), 512u);
  EXPECT_EQ(detail::checked_mul(size_t(1) << 20, 8, "x"), size_t(8) << 20);
  try {
    detail::checked_round_up(SIZE_MAX - 3, 256, "Heap::alloc(huge)");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("Heap::alloc(huge)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("overflows"), std::string::npos) << e.what();
  }
  EXPECT_THROW(detail::checked_mul(size_t(1) << 40, size_t(1) << 30, "count x dtype"), InvalidArgument);
  EXPECT_THROW(detail::checked_add(SIZE_MAX, 1, "sum"), InvalidArgument);
}
