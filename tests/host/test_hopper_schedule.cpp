// The Hopper GEMM's tile schedule (src/overlap/hopper_schedule.hpp), run on the host the way the
// kernel's clusters walk it: every tile once, row shards in landing order, raster groups inside a
// shard, for both cluster sizes and the shapes at 2-8 ranks.
#include <gtest/gtest.h>

#include <set>
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
std::vector<Visit> walk(int m, int n, int cluster, int group_m, int shard_rows, int count, int first) {
  const int units_m = (m + kBlockRows * cluster - 1) / (kBlockRows * cluster), units_n = (n + 255) / 256;
  const int group = shard_rows > 0 ? shard_group(shard_rows, cluster, group_m) : group_m;
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
          for (int me = 0; me < ranks; ++me) {
            const int m = shard_rows * ranks;
            const std::string what = std::to_string(ranks) + " ranks, shards of " + std::to_string(shard_rows) + ", Nc " +
                                     std::to_string(n) + ", cluster " + std::to_string(cluster) + ", rank " + std::to_string(me);
            const std::vector<Visit> order = walk(m, n, cluster, 8, shard_rows, ranks, me);
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
