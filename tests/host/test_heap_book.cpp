// The heap's space book (member 0's decisions): placement, coalescing, growth and dropping.
#include <gtest/gtest.h>

#include <random>

#include "../../src/runtime/heap_book.hpp"
#include "symmem/error.hpp"

using symmem::detail::SpaceBook;

TEST(HeapBook, FirstFitGrowsInChunksAndBigBlocksGetTheirOwnArena) {
  SpaceBook b(1 << 20, 1 << 16, 4096);
  auto p = b.place(4096);
  EXPECT_EQ(p.arena, 0);
  EXPECT_EQ(p.offset, 0u);
  EXPECT_EQ(p.new_arena_bytes, size_t(1) << 20);
  auto q = b.place(8192);
  EXPECT_EQ(q.arena, 0);
  EXPECT_EQ(q.offset, 4096u);
  EXPECT_EQ(q.new_arena_bytes, 0u);
  auto big = b.place(3 << 20);
  EXPECT_EQ(big.arena, 1);
  EXPECT_EQ(big.new_arena_bytes, size_t(3) << 20);
  EXPECT_EQ(b.droppable(), -1);
  b.release(big.arena, big.offset, 3 << 20);
  EXPECT_EQ(b.droppable(), 1);  // larger than a chunk and all free: unmap it
  b.drop(1);
  EXPECT_EQ(b.droppable(), -1);
  auto r = b.place(4096);  // never into a dropped arena
  EXPECT_EQ(r.arena, 0);
}

TEST(HeapBook, ReleasesCoalesceAndDoubleReleaseIsRefused) {
  SpaceBook b(1 << 20, 1 << 16, 4096);
  std::vector<SpaceBook::Place> ps;
  for (int i = 0; i < 8; ++i) ps.push_back(b.place(4096));
  for (int i : {1, 3, 2}) b.release(0, ps[i].offset, 4096);
  auto p = b.place(3 * 4096);  // 1..3 merged into one range
  EXPECT_EQ(p.offset, ps[1].offset);
  b.release(0, p.offset, 3 * 4096);
  EXPECT_THROW(b.release(0, ps[2].offset, 4096), symmem::InvalidArgument);
  EXPECT_THROW(b.place(100), symmem::InvalidArgument);  // not a multiple of the alignment
}

TEST(HeapBook, RandomPlaceAndReleaseNeverOverlapAndReturnEverything) {
  SpaceBook b(size_t(1) << 22, 1 << 16, 4096);
  std::mt19937 rng(7);
  struct Live { int arena; size_t off, len; };
  std::vector<Live> live;
  for (int step = 0; step < 5000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      size_t len = 4096 * (1 + rng() % 64);
      auto p = b.place(len);
      for (auto& l : live)
        ASSERT_FALSE(l.arena == p.arena && p.offset < l.off + l.len && l.off < p.offset + len) << "overlap at step " << step;
      live.push_back({p.arena, p.offset, len});
    } else {
      size_t i = rng() % live.size();
      b.release(live[i].arena, live[i].off, live[i].len);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (auto& l : live) b.release(l.arena, l.off, l.len);
  for (size_t a = 0; a < b.arenas(); ++a) EXPECT_EQ(b.free_bytes(static_cast<int>(a)), b.arena_bytes(static_cast<int>(a)));
}
