// MoE configuration checks and buffer layout (host side).
#include <gtest/gtest.h>

#include "../../src/moe/moe_kernels.hpp"
#include "symmem/moe.hpp"

using namespace symmem::moe;

TEST(MoeConfig, ChecksNameTheField) {
  Config c{7168, 8, 256, 128, 0, true};
  EXPECT_EQ(detail::check_config(c, 4), "");
  Config bad = c;
  bad.hidden = 7160;  // fp8 row of 7160 bytes: not a multiple of 16
  EXPECT_NE(detail::check_config(bad, 4).find("hidden=7160"), std::string::npos);
  bad = c;
  bad.topk = 17;
  EXPECT_NE(detail::check_config(bad, 4).find("topk=17"), std::string::npos);
  bad = c;
  bad.num_experts = 250;
  EXPECT_NE(detail::check_config(bad, 4).find("num_experts=250"), std::string::npos);
  bad = c;
  bad.max_tokens = 0;
  EXPECT_NE(detail::check_config(bad, 4).find("max_tokens=0"), std::string::npos);
  bad = c;
  bad.kernels = static_cast<Kernels>(3);
  EXPECT_NE(detail::check_config(bad, 4).find("kernels=3"), std::string::npos);
  Config bf16{2048, 6, 64, 128, 0, false};
  EXPECT_EQ(detail::check_config(bf16, 2), "");
  bf16.hidden = 2052;  // bf16: a multiple of 8 elements
  EXPECT_NE(detail::check_config(bf16, 2), "");
}

TEST(MoeConfig, RowsAndLayout) {
  EXPECT_EQ(detail::row_bytes(7168, true), 7424u);   // fp8 + one scale per 128 channels (7392), to a 128-byte line
  EXPECT_EQ(detail::row_bytes(7168, false), 7168u * 2);
  EXPECT_EQ(detail::row_bytes(7200, true) % 128, 0u);         // a partial last scale group, rounded up
  EXPECT_EQ(detail::row_bytes(1024, true), 1024u + 8 * 4);    // under 2 KiB: 16-byte aligned only
  EXPECT_EQ(detail::scale_words(7168, true, false), 56);
  EXPECT_EQ(detail::scale_words(7168, true, true), 14);       // UE8M0: 56 exponents, 4 to a word
  EXPECT_EQ(detail::scale_words(7200, true, true), 15);       // 57 exponents
  EXPECT_EQ(detail::scale_words(7168, false, false), 0);
  EXPECT_EQ(detail::row_bytes(7168, true, true), 7296u);     // 7168 + 14 x 4 (7224), rounded up to 128
  Config u{7168, 8, 256, 128, 0, false, true};
  EXPECT_NE(detail::check_config(u, 4).find("ue8m0"), std::string::npos);  // UE8M0 without fp8
  Config c{7168, 8, 256, 128, 512, true};
  kern::Layout L = kern::make_layout(c, 4);
  EXPECT_EQ(L.experts_local, 64);
  EXPECT_LT(L.stage_off + 2 * 4 * 128 * L.row, L.meta_off + 1);
  EXPECT_LT(L.meta_off + 2 * 4 * 128 * sizeof(kern::Meta), L.comb_off + 1);
  EXPECT_LT(L.comb_off + 2 * 4 * 128 * 7168 * 2, L.send_count_off + 1);
  EXPECT_LT(L.arrive_off, L.bytes);
  EXPECT_LT(L.trace_off, L.bytes);
  // The decode shape at 4 ranks needs about 22 MiB (moe.hpp says so), in one round.
  EXPECT_EQ(L.rounds, 1);
  EXPECT_GT(L.bytes, size_t(21) << 20);
  EXPECT_LT(L.bytes, size_t(24) << 20);
  // Prefill in rounds of 512 tokens: 8 rounds, about 95 MiB (one round would need ~0.7 GiB).
  Config p{7168, 8, 256, 4096, 8192, true, false, 512};
  kern::Layout P = kern::make_layout(p, 4);
  EXPECT_EQ(P.round, 512);
  EXPECT_EQ(P.rounds, 8);
  EXPECT_GT(P.bytes, size_t(90) << 20);
  EXPECT_LT(P.bytes, size_t(100) << 20);
  p.round_tokens = 0;
  EXPECT_GT(kern::make_layout(p, 4).bytes, size_t(650) << 20);
  p.round_tokens = 1000;  // not a divisor: 5 rounds, the last one partial
  EXPECT_EQ(kern::make_layout(p, 4).rounds, 5);
}

// Small rounds travel as lines both ways: the dispatch's slots, the combine's headers and slots (a
// bf16 row as lines, a lane's vectors in 4 lines) and its blocks' marks; none of it where the
// lines are off (SYMMEM_MOE_LL=0) or the round is larger. The lines combine takes items of 128
// lines: 1 KiB of narrow lines, 1.5 KiB of wide ones (llc_payload_for, or SYMMEM_MOE_LL_WIDE).
TEST(MoeConfig, SmallRoundsTakeLineSlotsBothWays) {
  Config pplx{7168, 8, 256, 8, 0, true};
  const kern::Layout L = kern::make_layout(pplx, 8);
  ASSERT_TRUE(L.ll);
  EXPECT_EQ(L.llc_payload, 12u);  // (8 x 14 KiB x 7: wide)
  EXPECT_EQ(L.seg_bytes, 1536);
  EXPECT_EQ(L.llc_slot_lines, 10u * 128);  // ceil(14336 / 1536) segments, the last one partial
  EXPECT_EQ(L.llc_blocks, static_cast<uint32_t>((8 * 8 * 10 + 7) / 8));
  const kern::Layout N = kern::make_layout(pplx, 8, -1, 8);  // (SYMMEM_MOE_LL_WIDE=0)
  EXPECT_EQ(N.llc_payload, 8u);
  EXPECT_EQ(N.seg_bytes, kern::kSegBytes / 2);
  EXPECT_EQ(N.llc_slot_lines, 7168u * 2 / 8);
  EXPECT_EQ(N.llc_blocks, static_cast<uint32_t>((8 * 8 * 14 + 7) / 8));
  EXPECT_EQ(kern::make_layout(Config{2048, 6, 64, 8, 0, false}, 4).llc_payload, 8u);  // 8 x 4 KiB x 3: narrow
  EXPECT_EQ(kern::make_layout(Config{2048, 6, 64, 32, 0, false}, 4).llc_payload, 12u);  // 32 x 4 KiB x 3: wide
  EXPECT_EQ(kern::make_layout(Config{7168, 8, 256, 16, 0, false}, 2).llc_payload, 8u);  // 16 x 14 KiB x 1: narrow
  EXPECT_EQ(kern::make_layout(Config{2056, 6, 64, 8, 0, false}, 4).llc_slot_lines, 5u * 128);  // a partial segment of 16 bytes
  EXPECT_GE(L.llc_marks_off, L.llc_off + (2 * 8 + 2 * 8 * 8 * static_cast<size_t>(L.llc_slot_lines)) * 16);
  EXPECT_LE(L.llc_marks_off + 2 * L.llc_blocks * sizeof(uint64_t), L.bytes);
  const kern::Layout off = kern::make_layout(pplx, 8, 0);
  EXPECT_FALSE(off.ll);
  EXPECT_EQ(off.llc_slot_lines, 0u);
  EXPECT_LT(off.bytes, L.bytes - 2 * 8 * 8 * static_cast<size_t>(L.llc_slot_lines) * 16);  // no line slots at all
  Config larger{7168, 8, 256, 16, 0, true};
  EXPECT_FALSE(kern::make_layout(larger, 8).ll);
  EXPECT_TRUE(kern::make_layout(larger, 4).ll);      // 16 x 7168 channels: under 4 ranks' 262144
  EXPECT_TRUE(kern::make_layout(larger, 8, 16).ll);  // (SYMMEM_MOE_LL_TOKENS=16)
  larger.max_tokens = 32;                            // 229376
  EXPECT_TRUE(kern::make_layout(larger, 4).ll);
  EXPECT_TRUE(kern::make_layout(larger, 3).ll);
  EXPECT_TRUE(kern::make_layout(larger, 2).ll);      // under 262144
  EXPECT_FALSE(kern::make_layout(larger, 5).ll);
  larger.hidden = 8200;                              // 32 x 8200 = 262400: over it
  EXPECT_FALSE(kern::make_layout(larger, 4).ll);
  EXPECT_FALSE(kern::make_layout(larger, 2).ll);
  larger.hidden = 7168;
  Config mid{2048, 6, 64, 32, 0, false};             // 32 x 2048 = 65536
  EXPECT_TRUE(kern::make_layout(mid, 4).ll);
  EXPECT_TRUE(kern::make_layout(mid, 3).ll);
  EXPECT_FALSE(kern::make_layout(mid, 5).ll);        // (not measured above 4 ranks: 8 tokens at most)
  EXPECT_TRUE(kern::make_layout(mid, 2).ll);
  larger.max_tokens = kern::kLLMaxTokens + 1;
  EXPECT_FALSE(kern::make_layout(larger, 8, 1000).ll);  // past what the kernels take
  Config wide{2048, 6, 64, 8, 0, false};  // 8 ranks x 8 rows x 4 items: 256, small either way
  EXPECT_EQ(kern::make_layout(wide, 8).seg_bytes, kern::kSegBytes / 2);
  Config many{8192, 8, 512, 8, 0, false};  // 8 x 8 x 8 items of 2 KiB: 512 (small); at 16 ranks 1024, the lines' item all the same
  EXPECT_EQ(kern::make_layout(many, 16).seg_bytes, 1536);
  EXPECT_EQ(kern::make_layout(many, 16, -1, 8).seg_bytes, kern::kSegBytes / 2);
}

// Combine's work items: 1 KiB where a one-round combine has at most kSmallCombineItems items of
// 2 KiB (n x R rows of ceil(2H / 2 KiB) segments), else 2 KiB; always 2 KiB over several rounds.
TEST(MoeConfig, SmallCombinesTakeHalfSegments) {
  Config pplx1{2048, 6, 64, 1, 0, false};        // 2 segments of 2 KiB a row
  Config pplx128{2048, 6, 64, 128, 0, false};
  Config decode{7168, 8, 256, 128, 0, true};     // 7 segments
  Config prefill{7168, 8, 256, 4096, 8192, true, false, 1024};
  EXPECT_EQ(kern::make_layout(pplx1, 2).seg_bytes, kern::kSegBytes / 2);
  EXPECT_EQ(kern::make_layout(pplx1, 8).seg_bytes, kern::kSegBytes / 2);
  EXPECT_EQ(kern::make_layout(pplx128, 2).seg_bytes, kern::kSegBytes / 2);  // 512 items
  EXPECT_EQ(kern::make_layout(pplx128, 3).seg_bytes, kern::kSegBytes);      // 768
  EXPECT_EQ(kern::make_layout(decode, 2).seg_bytes, kern::kSegBytes);
  Config decode1{7168, 8, 256, 1, 0, true};
  EXPECT_EQ(kern::make_layout(decode1, 4, 0).seg_bytes, kern::kSegBytes / 2);  // (staged: SYMMEM_MOE_LL=0)
  EXPECT_EQ(kern::make_layout(prefill, 2).seg_bytes, kern::kSegBytes);
  prefill.max_tokens = 8;
  prefill.round_tokens = 4;  // two rounds: the pipelined combine keeps 2 KiB
  EXPECT_EQ(kern::make_layout(prefill, 2).seg_bytes, kern::kSegBytes);
  EXPECT_EQ(kern::row_segments(kern::make_layout(pplx1, 2)), 4);   // 4 KiB rows in 1 KiB items
  EXPECT_EQ(kern::row_segments(kern::make_layout(decode, 2)), 7);   // 14 KiB rows in 2 KiB items
  EXPECT_EQ(kern::row_segments(kern::make_layout(decode1, 4, 0)), 14);
  EXPECT_EQ(kern::row_segments(kern::make_layout(decode1, 4)), 14);        // (lines, narrow: 1 KiB items)
  EXPECT_EQ(kern::row_segments(kern::make_layout(decode1, 4, -1, 12)), 10);  // (wide: 1.5 KiB items)
}

// Small rounds travel as LL lines: one round of at most kLLTokens tokens (more where R x H is small
// at up to 4 ranks: SmallRoundsTakeLineSlotsBothWays); a slot holds line 0, K
// routing lines and the row with its scale words in 8-byte lines; the slots lie inside the buffer,
// after the counters that the constructor zeroes.
TEST(MoeConfig, SmallRoundsTravelAsLines) {
  Config one{7168, 8, 256, 1, 0, true};  // fp8: 7168 bytes and 56 scale words, 924 lines
  const kern::Layout L = kern::make_layout(one, 4);
  EXPECT_TRUE(L.ll);
  EXPECT_EQ(L.ll_slot_lines, 1u + 8u + 924u);
  EXPECT_GT(L.ll_off, L.send_count_off);
  EXPECT_LE(L.ll_off + 2 * 4 * 1 * L.ll_slot_lines * 16, L.ll_ops_off);
  EXPECT_LE(L.ll_ops_off + 8 * 2 * (4 * 1 + 1), L.ll_base_off);  // the blocks' op counters, then the claim bases
  EXPECT_LE(L.ll_base_off + 4 * 4 * 64, L.bytes);
  Config bf{2048, 6, 64, 8, 0, false};  // 4 KiB rows: 512 lines
  EXPECT_TRUE(kern::make_layout(bf, 2).ll);
  EXPECT_EQ(kern::make_layout(bf, 2).ll_slot_lines, 1u + 6u + 512u);
  Config odd{320, 8, 16, 3, 0, true};  // 320 bytes and 3 scale words: 41.5 -> 42 lines
  EXPECT_EQ(kern::make_layout(odd, 2).ll_slot_lines, 1u + 8u + 42u);
  EXPECT_EQ(kern::make_layout(odd, 2, -1, 12).ll_slot_lines, 1u + 8u + 42u);  // (the dispatch's rows narrow whatever the combine's format)
  Config many{256, 4, 2 * (kern::kLLMaxExperts + 1), 1, 0, false};  // more local experts than the publisher counts
  EXPECT_FALSE(kern::make_layout(many, 2).ll);
  bf.max_tokens = kern::kLLTokens + 1;
  EXPECT_FALSE(kern::make_layout(bf, 8).ll);  // (above 4 ranks the lines stop at kLLTokens)
  EXPECT_TRUE(kern::make_layout(bf, 2).ll);   // (9 x 2048 channels: under 2 ranks' ll_channels_for)
  bf.max_tokens = 8;
  bf.round_tokens = 4;  // two rounds: staged
  EXPECT_FALSE(kern::make_layout(bf, 2).ll);
}

// The streamed kernels' rings: 2 x R slots a source at two ranks, at most kRingRowsWide above, and
// never more than the staging area holds (every rank derives the same count from n and R).
TEST(MoeConfig, RingSlotsFollowRanksAndRound) {
  Config p{7168, 8, 256, 4096, 8192, true, false, 1024};
  EXPECT_EQ(kern::ring_slots(kern::make_layout(p, 2)), 2048u);
  EXPECT_EQ(kern::ring_slots(kern::make_layout(p, 3)), kern::kRingRowsWide);
  EXPECT_EQ(kern::ring_slots(kern::make_layout(p, 4)), kern::kRingRowsWide);
  EXPECT_EQ(kern::ring_slots(kern::make_layout(p, 8)), kern::kRingRowsWide);
  p.round_tokens = 256;
  EXPECT_EQ(kern::ring_slots(kern::make_layout(p, 4)), 512u);
  for (int n : {2, 3, 4, 8}) {
    for (int r : {16, 100, 512, 1024, 2048}) {
      p.round_tokens = r;
      const kern::Layout L = kern::make_layout(p, n);
      EXPECT_LE(kern::ring_slots(L), 2u * static_cast<uint64_t>(L.round)) << n << " ranks, R " << r;
      EXPECT_LE(L.ring_ready_off + n * kern::ring_slots(L) * 8, L.ring_release_off) << n << " ranks, R " << r;
      EXPECT_LE(L.ring_release_off + n * kern::ring_slots(L) * 8, L.ring_announce_off) << n << " ranks, R " << r;
    }
  }
}
