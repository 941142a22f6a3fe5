// The Hopper GEMM's tile schedule (src/overlap/hopper_schedule.hpp), run on the host the way the
// kernel's clusters walk it: every tile once, row shards in landing order, raster groups inside a
// shard, for both cluster sizes and the shapes at 2-8 ranks; and a model of
// matmul_reduce_scatter's fused form (overlap.cpp: rs_fused) that runs its waits and counts to
// completion under random interleavings.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "../../src/overlap/hopper_schedule.hpp"

using namespace symmem::overlap::schedule;

namespace {

struct Visit {
  int shard, m0, n0;
  int group;  // the raster group of its unit
};

// The tiles in the order of their units (u = 0, 1, ...: the clusters take u = c, c + clusters, ...,
// so a smaller u starts no later), each unit's kCluster row blocks together.
// clip_to_shard: the raster clipped to a shard's units instead of a row group's (hopper_gemm.cu
// clips to a row group's; a raster wider than a row group needs the shard's: see the fused form's
// model at raster 8 below).
std::vector<Visit> walk(int m, int n, int cluster, int group_m, int shard_rows, int count, int first, int groups = 1,
                        bool clip_to_shard = false) {
  const int units_m = (m + kBlockRows * cluster - 1) / (kBlockRows * cluster), units_n = (n + 255) / 256;
  const int group = shard_rows > 0 ? shard_group(clip_to_shard ? shard_rows : shard_rows / groups, cluster, group_m) : group_m;
  std::vector<Visit> out;
  for (int u = 0; u < units_m * units_n; ++u) {
    int um, un;
    unit_coords(u, units_m, units_n, group, um, un);
    for (int r = 0; r < cluster; ++r) {
      int shard, m0, row;
      tile_rows(shard_rows, count, first, um * cluster + r, shard, m0, row);
      out.push_back({shard, m0, un * 256, u / (group * units_n)});
    }
  }
  return out;
}

}  // namespace

TEST(HopperSchedule, EveryTileOnceWithoutShards) {
  for (int cluster : {1, 2})
    for (auto [m, n] : {std::pair{8192, 3584}, {1000, 584}, {128, 256}, {2048, 7168}, {384, 512}})
      for (int group : {1, 3, 8, 16}) {
        std::set<std::pair<int, int>> seen;
        for (const Visit& v : walk(m, n, cluster, group, 0, 0, 0)) {
          if (v.m0 >= m) continue;  // the second CTA of a cluster past the last row block: clipped
          EXPECT_TRUE(seen.insert({v.m0, v.n0}).second) << m << " x " << n << " cluster " << cluster << ": tile twice";
        }
        EXPECT_EQ(seen.size(), static_cast<size_t>((m + 127) / 128) * ((n + 255) / 256)) << m << " x " << n;
      }
}

TEST(HopperSchedule, ShardsRunInLandingOrderAndGroupsStayInside) {
  for (int cluster : {1, 2})
    for (int ranks : {2, 3, 4, 8})
      for (int shard_rows : {256, 512, 1024, 2048, 4096})
        for (int n : {384, 3584, 7168})
          for (int groups : {1, 2, 4})  // (row groups, as the fused form runs: the raster groups inside them)
          for (bool clip_to_shard : {false, true})  // (or inside the shard only: not built)
          for (int me = 0; me < ranks; ++me) {
            if (shard_rows % (groups * kBlockRows * cluster) != 0) continue;
            const int m = shard_rows * ranks;
            const std::string what = std::to_string(ranks) + " ranks, shards of " + std::to_string(shard_rows) + ", Nc " +
                                     std::to_string(n) + ", cluster " + std::to_string(cluster) + ", " + std::to_string(groups) +
                                     " row groups, rank " + std::to_string(me) + (clip_to_shard ? ", raster clipped to the shard" : "");
            const std::vector<Visit> order = walk(m, n, cluster, 8, shard_rows, ranks, me, groups, clip_to_shard);
            std::set<std::pair<int, int>> seen;
            int step = 0;  // position of the current shard in the landing order me, me - 1, ...
            for (const Visit& v : order) {
              ASSERT_GE(v.shard, 0) << what;
              ASSERT_EQ(v.m0 / shard_rows, v.shard) << what << ": a tile's rows are not in its shard";
              const int pos = ((me - v.shard) % ranks + ranks) % ranks;
              ASSERT_GE(pos, step) << what << ": shard " << v.shard << " after a later one";
              step = pos;
              EXPECT_TRUE(seen.insert({v.m0, v.n0}).second) << what << ": tile twice";
            }
            EXPECT_EQ(seen.size(), static_cast<size_t>(m / 128) * ((n + 255) / 256)) << what;
            // A raster group's units all lie in one shard.
            std::vector<int> shard_of_group(order.back().group + 1, -1);
            for (const Visit& v : order) {
              int& s = shard_of_group[v.group];
              if (s < 0) s = v.shard;
              EXPECT_EQ(s, v.shard) << what << ": raster group " << v.group << " spans two shards";
            }
          }
}

TEST(HopperSchedule, ShardGroupIsTheLargestDivisorUpToTheAsked) {
  EXPECT_EQ(shard_group(2048, 2, 8), 8);  // 8 units a shard
  EXPECT_EQ(shard_group(1024, 2, 8), 4);  // 4
  EXPECT_EQ(shard_group(1536, 2, 8), 6);  // 6
  EXPECT_EQ(shard_group(1280, 2, 8), 5);  // 5
  EXPECT_EQ(shard_group(256, 2, 8), 1);   // 1
  EXPECT_EQ(shard_group(3584, 1, 8), 7);  // 28 units a shard
}

namespace {

// A model of matmul_reduce_scatter's fused form at `ranks` ranks: each rank's persistent GEMM is
// `clusters` clusters walking their units (u = c, c + clusters, ...) in the order `walk` gives
// (rank r: first r - 1, its own block last), a cluster's CTAs in step (they share
// their stages). A unit of a peer block waits for nothing; it is counted when its cluster starts
// the next unit's k-loop, or when the cluster ends. A unit of the own block runs its k-loop (which
// counts the unit before it), then waits until every other rank has pushed rows groups 0..g of this
// rank's block (a rank pushes a group of block b once all of that group's units are counted, in
// increasing g on one stream a peer). Returns "" when every cluster of every rank ends, else what
// is stuck, under a random interleaving (seed).
// The epilogue ring (`ring`): every unit but those of the first block (r - 1) waits after its
// k-loop until rank r - 1 has pushed groups 0..g of the unit's block (its sum so far); a rank
// pushes its blocks but the own one to rank r + 1, each once counted, in increasing g.
std::string run_fused_model(int ranks, int shard_rows, int groups, int n, int clusters, unsigned seed,
                            const std::function<std::vector<Visit>(int rank)>& order_of = nullptr, bool ring = false, int raster = 2,
                            bool clip_to_shard = false) {
  const int cluster = 2, m = shard_rows * ranks, grows = shard_rows / groups;
  struct Unit {
    int shard, group;
  };
  struct Cluster {
    std::vector<Unit> units;
    size_t at = 0;
    bool in_loop = false;  // the current unit's k-loop has run (its previous unit is counted)
    int pending = -1;      // a peer unit's index not yet counted
  };
  std::vector<std::vector<Cluster>> cl(ranks, std::vector<Cluster>(clusters));
  // counted[r][b * groups + g]: units of block b, group g that rank r has counted; total: their number.
  std::vector<std::vector<int>> counted(ranks, std::vector<int>(ranks * groups, 0)), total = counted;
  for (int r = 0; r < ranks; ++r) {
    const std::vector<Visit> order =
        order_of ? order_of(r) : walk(m, n, cluster, raster, shard_rows, ranks, (r + ranks - 1) % ranks, groups, clip_to_shard);
    for (size_t i = 0; i < order.size(); i += cluster) {  // a unit: `cluster` consecutive row blocks
      const Visit& v = order[i];
      const Unit u{v.shard, (v.m0 - v.shard * shard_rows) / grows};
      cl[r][(i / cluster) % clusters].units.push_back(u);
      if (u.shard != r) ++total[r][u.shard * groups + u.group];
    }
  }
  // pushed(r, b): groups of block b that rank r has pushed (a prefix: one stream a peer, in order).
  auto pushed = [&](int r, int b) {
    int g = 0;
    while (g < groups && counted[r][b * groups + g] == total[r][b * groups + g]) ++g;
    return g;
  };
  auto count = [&](int r, Cluster& c) {
    if (c.pending < 0) return;
    const Unit& u = c.units[c.pending];
    ++counted[r][u.shard * groups + u.group];
    c.pending = -1;
  };
  std::mt19937 rng(seed);
  for (;;) {
    std::vector<std::pair<int, int>> ready;  // (rank, cluster) that can take a step
    bool all_done = true;
    for (int r = 0; r < ranks; ++r)
      for (int c = 0; c < clusters; ++c) {
        Cluster& x = cl[r][c];
        if (x.at == x.units.size()) {
          if (x.pending >= 0) ready.push_back({r, c});
          continue;
        }
        all_done = false;
        const Unit& u = x.units[x.at];
        bool can = true;
        if (x.in_loop && ring) {
          const int prev = (r + ranks - 1) % ranks;  // also the first block's index
          can = u.shard == prev || pushed(prev, u.shard) >= u.group + 1;
        } else if (x.in_loop && u.shard == r) {
          for (int p = 0; p < ranks && can; ++p)
            if (p != r && pushed(p, r) < u.group + 1) can = false;
        }
        if (can) ready.push_back({r, c});
      }
    if (ready.empty()) {
      if (all_done) return "";
      for (int r = 0; r < ranks; ++r)
        for (int c = 0; c < clusters; ++c)
          if (cl[r][c].at < cl[r][c].units.size())
            return "stuck: rank " + std::to_string(r) + " cluster " + std::to_string(c) + " at block " +
                   std::to_string(cl[r][c].units[cl[r][c].at].shard) + " group " + std::to_string(cl[r][c].units[cl[r][c].at].group);
      return "stuck";
    }
    auto [r, c] = ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng)];
    Cluster& x = cl[r][c];
    if (x.at == x.units.size()) {
      count(r, x);  // the cluster's last unit, counted after its k-loop
    } else if (!x.in_loop) {
      count(r, x);  // the k-loop counts the unit before
      x.in_loop = true;
    } else {
      if (x.units[x.at].shard != r) x.pending = static_cast<int>(x.at);
      ++x.at;
      x.in_loop = false;
    }
  }
}

// The fused form's (or the ring's) model at 2, 3, 4 and 8 ranks, three shard and row-group shapes,
// 1-66 clusters, four random interleavings each: every run completes. Raster 2 clipped to a row
// group (as hopper_gemm.cu runs it), and raster 8 clipped to the shard (a raster that spans row
// groups: what hopper_gemm's fused form would need to run raster 8; not built, session 64), over C
// 512 and 2048 columns wide (2 and 8 column units).
void expect_every_case_completes(bool ring, unsigned seed) {
  for (auto [raster, clip_to_shard] : {std::pair{2, false}, {8, true}})
    for (int n : {512, 2048})
      for (int ranks : {2, 3, 4, 8})
        for (auto [shard_rows, groups] : {std::pair{1024, 2}, {2048, 4}, {768, 3}, {4096, 8}})
          for (int clusters : {1, 3, 7, 66})
            for (int interleaving = 0; interleaving < 4; ++interleaving) {
              const std::string why = run_fused_model(ranks, shard_rows, groups, n, clusters, seed++, nullptr, ring, raster, clip_to_shard);
              EXPECT_EQ(why, "") << ranks << " ranks, " << groups << " groups, Nc " << n << ", " << clusters << " clusters, raster " << raster
                                 << (clip_to_shard ? " (clipped to the shard)" : "") << ", interleaving " << interleaving;
            }
}

}  // namespace

// The deadlock argument next to rs_fused, run: any ranks, cluster counts and row groups complete
// under random interleavings; the own block placed before the last peer block does not
// (the model can tell).
TEST(HopperSchedule, FusedFormCompletesForAnyClusterCounts) {
  expect_every_case_completes(false, 1234u);
  // The own block first, then the last peer block: a cluster holding an own unit waits for a group
  // that a peer's same-placed cluster has yet to compute.
  const int ranks = 4, shard_rows = 1024, groups = 2;
  auto own_first = [&](int r) {
    std::vector<Visit> order = walk(shard_rows * ranks, 512, 2, 2, shard_rows, ranks, (r + ranks - 1) % ranks, groups);
    std::stable_partition(order.begin() + (ranks - 2) * (order.size() / ranks), order.end(), [&](const Visit& v) { return v.shard == r; });
    return order;
  };
  EXPECT_NE(run_fused_model(ranks, shard_rows, groups, 512, 1, 7u, own_first), "");
}

// The epilogue ring's argument (next to rs_fused), run: every rank's GEMM in the same order as the
// fused form's, every block but the first waiting for its predecessor's sum of the block. Any
// ranks, cluster counts and row groups complete under random interleavings. Control: a rank that
// runs its blocks the other way round (own block first) gets stuck at some interleaving, since
// its first tiles wait for a step its predecessor takes last.
TEST(HopperSchedule, EpilogueRingCompletesForAnyClusterCounts) {
  expect_every_case_completes(true, 4321u);
  const int ranks = 4, shard_rows = 1024, groups = 2;
  auto reversed = [&](int r) {
    std::vector<Visit> order = walk(shard_rows * ranks, 512, 2, 2, shard_rows, ranks, (r + ranks - 1) % ranks, groups);
    std::reverse(order.begin(), order.end());
    return order;
  };
  EXPECT_NE(run_fused_model(ranks, shard_rows, groups, 512, 1, 7u, reversed, true), "");
}

// hopper_gemm_t's row tiles (t_tall tiles of 160 rows, then 128): they cover a shard's rows once,
// only the last one reaching past it.
TEST(HopperSchedule, TransposedRowTilesCoverAShardOnce) {
  for (int rows : {1, 100, 160, 288, 1000, 4096, 8192})
    for (int tall : {-1, 0, 1, 2, 7, 51, 52, 1000}) {
      const int t = t_tall(rows, tall), per = t_row_tiles(rows, t);
      ASSERT_TRUE(t >= 0 && t <= (rows + 159) / 160) << rows << " rows, tall " << tall;
      int next = 0;
      for (int b = 0; b < per; ++b) {
        ASSERT_EQ(t_tile_row(b, t), next) << rows << " rows, tall " << tall << ", tile " << b;
        ASSERT_EQ(t_tile_height(b, t), b < t ? 160 : 128);
        next += t_tile_height(b, t);
        ASSERT_TRUE(b + 1 == per ? next >= rows : next < rows) << rows << " rows, tall " << tall << ", tile " << b;
      }
    }
}

// The tall count chosen: 160-row tiles only unless 128-row ones shorten the walk by 0.5% (2 shards of
// 8192 rows x 16 column units on 66 clusters: 26 x 160 rows, against 4072 with nine of 128 a
// shard); never a longer walk than 160-row tiles alone.
TEST(HopperSchedule, TransposedTallCountShortensTheWalkOrKeepsTallTiles) {
  const long all = t_walk_rows(8192, 2, 16, 66, 2, -1);
  EXPECT_EQ(all, 26 * 160);
  const int t = t_choose_tall(8192, 2, 16, 66, 2);
  EXPECT_EQ(t, 44);
  EXPECT_EQ(t_walk_rows(8192, 2, 16, 66, 2, t), 4072);
  EXPECT_EQ(t_choose_tall(160 * 66, 1, 1, 66, 8), 66);  // one whole wave: nothing to gain
  for (int rows : {1000, 2048, 4096, 8192})
    for (int count : {1, 2, 4})
      for (int units_n : {7, 14, 16, 28, 56})
        for (int clusters : {1, 8, 66}) {
          const int c = t_choose_tall(rows, count, units_n, clusters, 8);
          EXPECT_LE(t_walk_rows(rows, count, units_n, clusters, 8, c), t_walk_rows(rows, count, units_n, clusters, 8, -1))
              << rows << " rows, " << count << " shards, " << units_n << " units, " << clusters << " clusters";
        }
}

// hopper_gemm_t's walk (shard_unit): every (shard, row tile, column unit) once, the shards whole and
// in landing order, for shards whose rows are and are not a multiple of its 160-row tiles, with
// and without tiles of 128 rows.
TEST(HopperSchedule, TransposedTilesCoverEveryShardOnceInLandingOrder) {
  for (int count : {1, 2, 3, 4, 8})
    for (int rows : {160, 1000, 4096, 8192})
      for (int units_n : {1, 5, 16})
        for (int group : {1, 2, 8})
          for (int first = 0; first < count; ++first) {
            const int per = t_row_tiles(rows, t_tall(rows, first == 0 ? -1 : 2));
            const std::string what = std::to_string(count) + " shards of " + std::to_string(rows) + " rows, " + std::to_string(units_n) +
                                     " column units, group " + std::to_string(group) + ", first " + std::to_string(first);
            std::set<std::tuple<int, int, int>> seen;
            int step = 0;
            for (int u = 0; u < count * per * units_n; ++u) {
              int shard, block, un;
              shard_unit(u, per, units_n, count, first, group, shard, block, un);
              ASSERT_TRUE(shard >= 0 && shard < count && block >= 0 && block < per && un >= 0 && un < units_n) << what << ": unit " << u;
              const int pos = ((first - shard) % count + count) % count;
              ASSERT_GE(pos, step) << what << ": shard " << shard << " after a later one";
              step = pos;
              ASSERT_TRUE(seen.insert({shard, block, un}).second) << what << ": unit " << u << " twice";
            }
            EXPECT_EQ(seen.size(), static_cast<size_t>(count) * per * units_n) << what;
          }
}

// The straddle (t_unit_tile with t_straddle_rows's rows, 2 shards): every tile 160 rows; per column
// unit, every row of both shards in exactly one tile's t_tile_rows_in, which is what its two 80-row
// boxes store of each shard (the straddle's second through a map of shard 1's first rows);
// the straddle's row of tiles first, then the shards in landing order. Where it applies and what
// the walk model says at the 8B shape (2 x 8192 rows, 16 column units, 66 clusters: 4000 against
// the 128-row tiles' 4072).
TEST(HopperSchedule, StraddleTilesCoverBothShardsOnce) {
  EXPECT_EQ(t_straddle_rows(8192, 2), 32);
  EXPECT_EQ(t_straddle_rows(4096, 2), 0);  // (96 rows left: more than a half)
  EXPECT_EQ(t_straddle_rows(8192, 4), 0);
  EXPECT_EQ(t_straddle_rows(8000, 2), 0);
  EXPECT_EQ(t_straddle_rows(560, 2), 80);
  EXPECT_EQ(t_walk_rows_straddle(8192, 16, 66), 4000);
  EXPECT_TRUE(t_choose_straddle(8192, 2, 16, 66, 2));
  EXPECT_FALSE(t_choose_straddle(4096, 2, 16, 66, 2));
  for (int rows : {161, 200, 240, 488, 512, 560, 1024, 8192})
    for (int units_n : {1, 3, 16})
      for (int first = 0; first < 2; ++first) {
        const int s = t_straddle_rows(rows, 2), per = rows / 160;
        ASSERT_GT(s, 0) << rows;
        const std::string what = std::to_string(rows) + " rows, " + std::to_string(units_n) + " column units, first " + std::to_string(first);
        std::vector<std::vector<int>> cover(2 * units_n, std::vector<int>(rows, 0));  // [shard x units_n + un][row]
        for (int u = 0; u < (2 * per + 1) * units_n; ++u) {
          const TTile t = t_unit_tile(u, rows, per, units_n, 2, first, 2, per, s);
          ASSERT_EQ(t.height, 160) << what << ": unit " << u;
          ASSERT_EQ(t.straddle, u < units_n) << what << ": unit " << u;
          ASSERT_EQ(t.row1 - t.row, t.straddle ? s - rows : 80) << what;
          if (!t.straddle) ASSERT_EQ(t.shard, u < (per + 1) * units_n ? first : 1 - first) << what << ": unit " << u << " out of landing order";
          for (int shard = 0; shard < 2; ++shard) {
            int r0, r1;
            t_tile_rows_in(t, shard, rows, s, r0, r1);
            // What the boxes store of `shard`: half 0's rows [row, row + 80), half 1's [row1, row1 + 80), clipped to
            // [0, rows), the straddle's half 1 to its s rows (the map of shard 1's first s rows).
            int b0 = rows, b1 = 0;
            for (int h = 0; h < 2; ++h) {
              const int hs = h == 0 ? t.shard : t.shard1, hr = h == 0 ? t.row : t.row1;
              if (hs != shard) continue;
              const int lo = std::max(hr, 0), hi = std::min(hr + 80, t.straddle && h == 1 ? s : rows);
              if (lo < hi) b0 = std::min(b0, lo), b1 = std::max(b1, hi);
            }
            if (r0 == r1) {
              ASSERT_EQ(b1, 0) << what << ": unit " << u << " holds rows of shard " << shard << " it does not count";
              continue;
            }
            ASSERT_TRUE(b0 == r0 && b1 == r1) << what << ": unit " << u << ", shard " << shard << ": boxes [" << b0 << ", " << b1
                                              << ") against rows [" << r0 << ", " << r1 << ")";
            for (int r = r0; r < r1; ++r) ++cover[shard * units_n + t.un][r];
          }
        }
        for (int i = 0; i < 2 * units_n; ++i)
          for (int r = 0; r < rows; ++r) ASSERT_EQ(cover[i][r], 1) << what << ": shard " << i / units_n << " row " << r << ", unit " << i % units_n;
      }
}
