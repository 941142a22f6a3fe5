// A model of matmul_reduce_scatter's fused form on hopper_gemm_t (src/overlap/hopper_gemm_t.cu,
// overlap.cpp: rs_fused in Form::kFusedT; row tiles of 160 and 128 rows), run to completion under
// random interleavings at 2-4 ranks: every cluster's producer fills a ring of 5 stages in tile
// order (the kernel's kSumC: the partials are not in the ring, the summed tile's consumer waits
// for each peer's signal after its turn; with HopperRowShards::sum_in_ring, control 4, a summed
// tile's partial stages come after its k-blocks, once every peer's signal covers the row groups it
// overlaps), two ping-pong consumers take every other tile and hand the turn over after their
// last wait of a tile (in the ring at 2-3 ranks a summed tile frees its last k-block and its
// partial stages only after the turn), a stage is
// freed one k-block late (as wgmma.wait_group 1 frees it), every peer tile counts in each row group it overlaps after its stores, and each
// rank's pushes wait for hopper_t_group_count. The consumers' waits are parity waits, as the
// mbarrier's: the model checks that nothing waits for ever and that no wait ever returns on the
// wrong fill (a stage two fills behind the one waited for). With the straddle (2 ranks,
// HopperRowShards::straddle: schedule::t_unit_tile's tiles) the straddle tiles count their rows of
// the peer shard, and each cluster's helpers sum its straddle tiles' own rows once all of them
// are stored and the peer's signal covers those rows' group; the run completes only when they have.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "../../src/overlap/hopper_gemm.hpp"
#include "../../src/overlap/hopper_schedule.hpp"

namespace {

constexpr int kStages = 5;

struct Tile {
  int shard, row, height;  // (160 rows, or 128 past the shard's tall tiles)
  bool summed;
  int pushed, r0, r1;  // the shard whose rows [r0, r1) it counts (not summed)
  bool straddle;
};

struct Cluster {
  std::vector<Tile> tiles;
  std::vector<int> first_pos;  // each tile's first ring position
  std::vector<bool> loaded, released;
  int next_load = 0;           // the producer's next position
  std::vector<int> handoff;    // handoff[j]: tile j's consumer has made its last wait of it
  std::vector<int> stored;     // stored[j]: tile j is in C and counted
  int helped = 0;              // the straddle: this cluster's straddle tiles summed
  struct Consumer {
    int next = 0;       // its next tile (x, x + 2, ...)
    int tile = -1;      // the tile in hand (-1: none)
    int step = 0;       // positions of it consumed
    int held = -1;      // a k-block position consumed but not yet freed
    std::vector<int> pending;  // a summed tile's positions waited for, freed after the turn (waited_first)
    bool stored = false;
    bool done = false;
  } cons[2];
};

// One rank's state in the model.
struct Rank {
  std::vector<Cluster> clusters;
  std::vector<std::vector<uint64_t>> count;  // [shard][group]
  std::vector<uint64_t> signal;              // [slot]: groups 0 .. signal - 1 of that peer's partial landed
  std::vector<int> pushed;                   // [peer block]: groups pushed so far
};

// "" when every case completes; else what stuck or broke.
// control: 0 as the kernel runs (kSumC); 4 the partial stages in the ring after the k-blocks
// (sum_in_ring: as at 2 ranks before session 61, at 3+ before session 63); 1 as 4, but a summed
// tile hands the turn over after its k-loop (before its partial stages' waits); 2 the pushes wait
// for one count more than hopper_t_group_count; 3 as 4, but the summed tile's partial stages all
// waited for before any is freed at 4 ranks too (6 of them).
// tall: the shard's 160-row tiles (schedule::t_tall; -1 all), the rest 128 rows. straddle: the
// straddle's rows (2 ranks; schedule::t_straddle_rows), tall then ignored. control 5: the straddle
// counted in the group of its own rows instead of the peer's. group: the raster (the kernel's
// HopperGemmOptions::group_m; detail::reduce_raster picks 2 or 8).
std::string run_model(int ranks, int rows, int groups, int units_n, int kblocks, int nclusters, unsigned seed, int control = 0,
                      int tall = -1, int straddle = 0, int group = 2) {
  namespace sc = symmem::overlap::schedule;
  tall = straddle > 0 ? rows / sc::kTallRows : sc::t_tall(rows, tall);
  const int per = straddle > 0 ? rows / sc::kTallRows : sc::t_row_tiles(rows, tall), grows = rows / groups, peers = ranks - 1;
  const int n = units_n * 256;
  // The kernel's kSumC (the partials outside the ring), but for the controls that put them in it.
  const bool sum_c = !(control == 1 || control == 3 || control == 4);
  std::vector<Rank> rk(ranks);
  for (int me = 0; me < ranks; ++me) {
    Rank& r = rk[me];
    r.count.assign(ranks, std::vector<uint64_t>(groups, 0));
    r.signal.assign(ranks, 0);
    r.pushed.assign(ranks, 0);
    r.clusters.resize(nclusters);
    const int units = (ranks * per + (straddle > 0 ? 1 : 0)) * units_n, first = (me + ranks - 1) % ranks;
    for (int c = 0; c < nclusters; ++c) {
      Cluster& cl = r.clusters[c];
      int pos = 0;
      for (int u = c; u < units; u += nclusters) {
        const sc::TTile t = sc::t_unit_tile(u, rows, per, units_n, ranks, first, group, tall, straddle);
        const bool summed = t.shard == me && !t.straddle;
        const int pushed = t.straddle ? (control == 5 ? me : first) : t.shard;
        int r0 = 0, r1 = 0;
        sc::t_tile_rows_in(t, pushed, rows, straddle, r0, r1);
        cl.tiles.push_back({t.shard, t.row, t.height, summed, pushed, r0, r1, t.straddle});
        cl.first_pos.push_back(pos);
        pos += kblocks + (summed && !sum_c ? 2 * peers : 0);
      }
      cl.loaded.assign(pos, false);
      cl.released.assign(pos, false);
      cl.handoff.assign(cl.tiles.size(), 0);
      cl.stored.assign(cl.tiles.size(), 0);
      cl.cons[1].next = 1;
    }
  }
  auto tile_len = [&](const Tile& t) { return kblocks + (t.summed && !sum_c ? 2 * peers : 0); };
  // As the kernel: where a tile's partial stages fit in the ring beside its last k-block (2 and 3
  // ranks), the summed tile waits for them all, hands the turn over, and only then frees its last
  // k-block and the partial stages (after its drain and adds).
  const bool waited_first = 2 * peers < kStages || control == 3;
  auto g_last = [&](const Tile& t) { return (std::min(t.row + t.height, rows) - 1) / grows; };
  std::mt19937 rng(seed);
  for (;;) {
    // Every enabled event, as a closure; one of them runs.
    std::vector<std::function<std::string()>> ev;
    bool all_done = true;
    for (int me = 0; me < ranks; ++me) {
      Rank& r = rk[me];
      for (Cluster& cl : r.clusters) {
        // The producer: position p needs p - 5 freed; a summed tile's first partial stage needs
        // every peer's signal of the groups the tile overlaps.
        if (cl.next_load < static_cast<int>(cl.loaded.size())) {
          const int p = cl.next_load;
          const int t = static_cast<int>(std::upper_bound(cl.first_pos.begin(), cl.first_pos.end(), p) - cl.first_pos.begin()) - 1;
          const Tile& tl = cl.tiles[t];
          bool ok = p < kStages || cl.released[p - kStages];
          if (ok && tl.summed && !sum_c && p - cl.first_pos[t] == kblocks)
            for (int j = 1; j <= peers; ++j) ok = ok && r.signal[(tl.shard + j) % ranks] >= static_cast<uint64_t>(g_last(tl)) + 1;
          if (ok) ev.push_back([&cl, p] { cl.loaded[p] = true; ++cl.next_load; return std::string(); });
        }
        for (int x = 0; x < 2; ++x) {
          Cluster::Consumer& cs = cl.cons[x];
          if (cs.done) continue;
          all_done = false;
          if (cs.tile < 0) {
            const int j = cs.next;
            if (j >= static_cast<int>(cl.tiles.size())) {
              ev.push_back([&cs] { cs.done = true; return std::string(); });
              continue;
            }
            if (j > 0 && !cl.handoff[j - 1]) continue;  // not my turn yet
            ev.push_back([&cs, j] { cs.tile = j; cs.step = 0; cs.stored = false; return std::string(); });
            continue;
          }
          const int j = cs.tile;
          const Tile& tl = cl.tiles[j];
          const int len = tile_len(tl);
          if (cs.step < len) {
            const int p = cl.first_pos[j] + cs.step;
            // The mbarrier's parity wait for fill f of stage p % 5 returns once the number of the
            // stage's completed fills has the other parity than f: right when it is f + 1, wrong
            // when it is f - 1 (the fill before has not landed).
            int fills = 0;
            for (int q = p % kStages; q < static_cast<int>(cl.loaded.size()) && cl.loaded[q]; q += kStages) ++fills;
            const int f = p / kStages;
            if ((fills & 1) == (f & 1)) continue;
            ev.push_back([&cl, &cs, p, j, len, kblocks_ = kblocks, &tl, control, fills, f, waited_first, sum_c] {
              if (fills < f + 1) return std::string("a consumer waited on a stage two fills behind");
              const int k = p - cl.first_pos[j];
              if (k < kblocks_) {  // a k-block: the previous one is freed once this one's wgmma are issued
                if (cs.held >= 0) cl.released[cs.held] = true;
                cs.held = p;
                if (k == kblocks_ - 1) {  // the k-loop's end: wgmma.wait_group 0 frees the last
                  if (tl.summed && waited_first && !sum_c)
                    cs.pending.push_back(p);
                  else
                    cl.released[p] = true;
                  cs.held = -1;
                }
              } else if (waited_first) {
                cs.pending.push_back(p);  // freed after the turn
              } else {
                cl.released[p] = true;  // a partial stage, freed once added
              }
              ++cs.step;
              if (cs.step == len || ((!tl.summed || control == 1) && cs.step == kblocks_)) cl.handoff[j] = 1;
              return std::string();
            });
            continue;
          }
          if (!cs.pending.empty()) {  // the drain and the adds: one stage freed at a time
            ev.push_back([&cl, &cs] {
              cl.released[cs.pending.front()] = true;
              cs.pending.erase(cs.pending.begin());
              return std::string();
            });
            continue;
          }
          if (!cs.stored) {
            if (sum_c && tl.summed) {  // kSumC: the consumer waits for every peer's signal of the tile's groups, then loads and adds
              bool landed = true;
              for (int q = 1; q <= peers; ++q) landed = landed && r.signal[(tl.shard + q) % ranks] >= static_cast<uint64_t>(g_last(tl)) + 1;
              if (!landed) continue;
            }
            ev.push_back([&r, &cl, &cs, &tl, j, grows] {
              if (!tl.summed)
                for (int g = tl.r0 / grows; g <= (tl.r1 - 1) / grows; ++g) r.count[tl.pushed][g] += 2;  // the cluster's two CTAs
              cs.stored = true;
              cl.stored[j] = 1;
              return std::string();
            });
            continue;
          }
          ev.push_back([&cs] { cs.tile = -1; cs.next += 2; return std::string(); });
        }
      }
      // The straddle's helpers: once every straddle tile of this cluster is stored (in any order),
      // and once the peer's signal covers the group of this rank's rows of them, they sum them.
      if (straddle > 0)
        for (Cluster& cl : r.clusters) {
          int mine = 0, stored = 0;
          for (int j = 0; j < static_cast<int>(cl.tiles.size()); ++j)
            if (cl.tiles[j].straddle) {
              ++mine;
              stored += cl.stored[j];
            }
          if (cl.helped == mine) continue;
          all_done = false;
          const int r_own = me == 0 ? rows - straddle : 0;
          if (stored == mine && r.signal[1 - me] >= static_cast<uint64_t>((r_own + straddle - 1) / grows) + 1)
            ev.push_back([&cl, mine] { cl.helped = mine; return std::string(); });
        }
      // The pushes: block p's group g to rank p once its count reaches the target, in g order.
      for (int p = 0; p < ranks; ++p) {
        if (p == me || r.pushed[p] >= groups) continue;
        const int g = r.pushed[p];
        if (r.count[p][g] >= symmem::overlap::hopper_t_group_count(rows, grows, g, n, tall, straddle, p) + (control == 2 ? 1 : 0))
          ev.push_back([&rk, &r, p, g, me] {
            rk[p].signal[me] = static_cast<uint64_t>(g) + 1;
            ++r.pushed[p];
            return std::string();
          });
      }
    }
    if (all_done) {
      for (int me = 0; me < ranks; ++me)
        for (int p = 0; p < ranks; ++p)
          if (p != me && rk[me].pushed[p] != groups) return "rank " + std::to_string(me) + " pushed only part of block " + std::to_string(p);
      return "";
    }
    if (ev.empty()) return "stuck";
    const std::string why = ev[rng() % ev.size()]();
    if (!why.empty()) return why;
  }
}

}  // namespace

TEST(HopperTModel, FusedFormCompletesWithoutParityAliasing) {
  unsigned seed = 1;
  for (int ranks : {2, 3, 4})
    for (auto [rows, groups] : {std::pair{256, 1}, {768, 3}, {1024, 2}, {2048, 4}})
      for (int units_n : {1, 2})
        for (int kblocks : {1, 2, 7})
          for (int nclusters : {1, 2, 5})
            for (int trial = 0; trial < 4; ++trial)
              for (int group : {2, 8}) {  // (the rasters detail::reduce_raster picks)
                // (trial 1 and 3: tiles of 128 rows after the first 160-row one, or all of them)
                const int tall = trial == 1 ? 1 : trial == 3 ? 0 : -1;
                const std::string why = run_model(ranks, rows, groups, units_n, kblocks, nclusters, seed++, 0, tall, 0, group);
                ASSERT_EQ(why, "") << ranks << " ranks, " << rows << " rows in " << groups << " groups, " << units_n << " column units, "
                                   << kblocks << " k-blocks, " << nclusters << " clusters, tall " << tall << ", raster " << group
                                   << ", seed " << seed - 1;
                // (sum_in_ring: the partial stages in the ring after the k-blocks)
                ASSERT_EQ(run_model(ranks, rows, groups, units_n, kblocks, nclusters, seed - 1, 4, tall, 0, group), "")
                    << ranks << " ranks, " << rows << " rows, " << kblocks << " k-blocks, " << nclusters << " clusters, tall " << tall
                    << ", raster " << group << ", partials in the ring";
              }
}

// The model has teeth: with the partials in the ring, a summed tile that hands the turn over before
// its partial stages' waits lets the other consumer's parity wait return on the wrong fill at some
// interleaving (from 4 ranks: 6 partial stages, more than the ring's 5, lie between the k-loop and
// the next tile), and a target one count too high leaves the own block waiting.
TEST(HopperTModel, ControlsFail) {
  bool aliased = false;
  for (unsigned seed = 1; seed < 400 && !aliased; ++seed)
    aliased = run_model(4, 1024, 2, 1, 2, 1, seed, 1) == "a consumer waited on a stage two fills behind";
  EXPECT_TRUE(aliased);
  EXPECT_EQ(run_model(2, 1024, 2, 1, 2, 1, 7u, 2), "stuck");
  EXPECT_EQ(run_model(4, 1024, 2, 1, 2, 1, 7u, 2), "stuck");
  EXPECT_EQ(run_model(4, 1024, 2, 1, 2, 1, 7u, 3), "stuck");  // (the sixth needs the first freed)
}

// The straddle at 2 ranks (every tile 160 rows, one row of them across the two shards, first in the
// walk): shards whose rows leave 8 to 80 over whole tiles, in one to four row groups, completes at
// any cluster count and interleaving; counted in the group of its own rows (control 5) the peer
// shard's push never comes.
TEST(HopperTModel, StraddleCompletes) {
  namespace sc = symmem::overlap::schedule;
  unsigned seed = 1;
  for (auto [rows, groups] : {std::pair{200, 1}, {512, 1}, {512, 2}, {560, 2}, {1024, 4}, {488, 1}})
    for (int units_n : {1, 2, 3})
      for (int kblocks : {1, 2, 7})
        for (int nclusters : {1, 2, 5, 9})
          for (int group : {2, 8}) {
            const int straddle = sc::t_straddle_rows(rows, 2);
            ASSERT_GT(straddle, 0) << rows;
            const std::string why = run_model(2, rows, groups, units_n, kblocks, nclusters, seed++, 0, -1, straddle, group);
            ASSERT_EQ(why, "") << rows << " rows in " << groups << " groups, " << units_n << " column units, " << kblocks << " k-blocks, "
                               << nclusters << " clusters, raster " << group << ", seed " << seed - 1;
          }
  EXPECT_EQ(run_model(2, 512, 2, 1, 2, 1, 7u, 5, -1, 32), "stuck");
}
