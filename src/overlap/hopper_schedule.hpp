#pragma once
// The Hopper GEMM's tile schedule (src/overlap/hopper_gemm.cu): which row and column blocks a unit
// of work covers, and in what order row shards run. Shared by the kernel and the host tests
// (tests/host/test_hopper_schedule.cpp), which check that every tile is covered once, shards run
// in landing order and a raster group stays inside one shard.
#include "symmem/export.hpp"

namespace symmem::overlap::schedule {

constexpr int kBlockRows = 128;  // a tile's rows (a CTA's); a unit is `cluster` row blocks x one column block

/// Unit u -> its row unit um and column block un: `group` row units at a time, column-block major
/// within the group (the group's A rows and one column of B stay in L2 together).
SYMMEM_HOST_DEVICE inline void unit_coords(int u, int units_m, int units_n, int group, int& um, int& un) {
  const int per_group = group * units_n;
  const int g = u / per_group, first = g * group;
  const int rows = units_m - first < group ? units_m - first : group;
  const int r = u - g * per_group;
  um = first + r % rows;
  un = r / rows;
}

/// Logical row block lmb -> its shard (-1 without shards: shard_rows == 0), first output row m0,
/// and row within the shard. Shards run first, first - 1, first - 2, ... (mod count): the order in
/// which the peers' rows land (peer me - j sends to this rank j-th).
SYMMEM_HOST_DEVICE inline void tile_rows(int shard_rows, int count, int first, int lmb, int& shard, int& m0, int& row_in_shard) {
  if (shard_rows == 0) {
    shard = -1;
    m0 = lmb * kBlockRows;
    row_in_shard = m0;
    return;
  }
  const int per = shard_rows / kBlockRows;
  const int j = lmb / per, block = lmb - j * per;  // the j-th shard in run order, its block
  shard = ((first - j) % count + count) % count;
  row_in_shard = block * kBlockRows;
  m0 = shard * shard_rows + row_in_shard;
}

/// hopper_gemm_t's units: each of `count` shards is `per` row tiles (its last one partial where
/// the tile's rows do not divide the shard's) x units_n column units. Unit u -> its shard, row tile
/// within the shard and column unit: the shards run whole, in landing order (first, first - 1,
/// ...; as tile_rows), and unit_coords' raster groups run inside each.
SYMMEM_HOST_DEVICE inline void shard_unit(int u, int per, int units_n, int count, int first, int group, int& shard, int& block, int& un) {
  const int per_shard = per * units_n;
  const int j = u / per_shard;
  unit_coords(u - j * per_shard, per, units_n, group, block, un);
  shard = ((first - j) % count + count) % count;
}

/// hopper_gemm_t's row tiles of a `rows`-row shard: `tall` tiles of 160 rows, then tiles of 128
/// (the last one clipped at the shard's last row where they do not divide the rest). A tall count
/// at or past the 160-row tiles that cover the shard (or negative) means those alone, the last one
/// clipped.
constexpr int kTallRows = 160, kShortRows = 128;
SYMMEM_HOST_DEVICE inline int t_tall(int rows, int tall) {
  const int all = (rows + kTallRows - 1) / kTallRows;
  return tall < 0 || tall > all ? all : tall;
}
SYMMEM_HOST_DEVICE inline int t_row_tiles(int rows, int tall) {
  const int rest = rows - kTallRows * tall;
  return tall + (rest > 0 ? (rest + kShortRows - 1) / kShortRows : 0);
}
SYMMEM_HOST_DEVICE inline int t_tile_row(int block, int tall) {
  return block < tall ? kTallRows * block : kTallRows * tall + kShortRows * (block - tall);
}
SYMMEM_HOST_DEVICE inline int t_tile_height(int block, int tall) { return block < tall ? kTallRows : kShortRows; }

/// The time of hopper_gemm_t's persistent walk over `count` shards of `rows` rows with `tall`
/// 160-row tiles a shard (t_tall), units_n column units a row tile and `clusters` clusters, each
/// taking every clusters-th unit of shard_unit's order (group: its raster): the most rows any
/// cluster computes, in 160-row tiles' time a row, a 128-row tile costing kShortCost (session 58,
/// 1 x H200, 21120 x 4096 x 7168, where both walk 5120 rows: 128-row tiles alone 1.077x the time of
/// 160-row ones).
constexpr int kShortCost = 138;
inline long t_walk_rows(int rows, int count, int units_n, int clusters, int group, int tall) {
  tall = t_tall(rows, tall);
  const int per = t_row_tiles(rows, tall);
  const long units = static_cast<long>(count) * per * units_n;
  long worst = 0;
  for (int c = 0; c < clusters && c < units; ++c) {
    long sum = 0;
    for (long u = c; u < units; u += clusters) {
      int block, un;
      const long per_shard = static_cast<long>(per) * units_n;
      unit_coords(static_cast<int>(u % per_shard), per, units_n, group, block, un);
      sum += block < tall ? kTallRows : kShortCost;
    }
    worst = sum > worst ? sum : worst;
  }
  return worst;
}

/// hopper_gemm_t's tall tiles a shard: 160-row tiles only (every tile but a shard's last full),
/// unless some tiles of 128 rows shorten the walk (t_walk_rows) by 0.5% or more; then the count
/// with the shortest walk, the most tall tiles among equals. (The model understates the gain:
/// session 58, 2 x H200, 70B matmul_reduce_scatter at TP = 2, M 16384, its fused form with 48 tall
/// tiles a shard, a walk 0.8% shorter, took 5892-5902 us against 6272-6305 with 160-row tiles
/// alone.) A shard's 160-row tiles leave a
/// partial one and a partial last wave: 2 shards of 8192 rows x 28 column units on 66 clusters walk
/// 45 x 160 rows where 44 tiles of 160 and 9 of 128 walk 7046 (session 58, 1 x H200, 16384 x
/// 7168 x 4096 over 2 shards: 1356 us against 1395; 8192 x 7168 x 4096, tall 20: 686 against 713).
inline int t_choose_tall(int rows, int count, int units_n, int clusters, int group) {
  const int all = t_tall(rows, -1);
  const long base = t_walk_rows(rows, count, units_n, clusters, group, all);
  int best = all;
  long best_rows = base;
  for (int tall = all - 1; tall >= 0; --tall) {
    const long w = t_walk_rows(rows, count, units_n, clusters, group, tall);
    if (w < best_rows) {
      best = tall;
      best_rows = w;
    }
  }
  return best_rows * 200 <= base * 199 ? best : all;
}

/// The straddle (hopper_gemm_t's fused sum at 2 shards, session 62): where a shard's rows leave
/// rem = rows % 160 in (0, 80] over whole 160-row tiles, shard 0's tiles start at its row 0 and
/// shard 1's at its row rem, and one more row of tiles holds shard 0's last rem rows at the start
/// of its first 80-row half (the box clipped at shard 0's end: zeros after them) and shard 1's
/// first 80 rows in its second, of which it stores the first rem (through a map of those rows
/// only; the rest are shard 1's first tile's, multiplied twice). Every tile is then 160 rows: 2 x
/// 8192-row shards are 103 rows of tiles as the whole 16384-row GEMM, where 160-row tiles alone
/// leave each shard a 32-row tile, and 128-row ones walk 1.8% longer (t_walk_rows: 4072 against
/// 4000 at 16 column units on 66 clusters). 0 where it does not apply.
SYMMEM_HOST_DEVICE inline int t_straddle_rows(int rows, int count) {
  const int rem = rows % kTallRows;
  return count == 2 && rows >= kTallRows && rem > 0 && rem <= kTallRows / 2 ? rem : 0;
}

/// hopper_gemm_t's tile of unit u: the shard and first row of each of its two 80-row halves (a
/// half's rows outside its shard are clipped by the maps), its height (160, or 128 past the shard's
/// tall tiles) and its column unit. Without a straddle: shard_unit's order, both halves in one
/// shard. With one (straddle = t_straddle_rows's rem, `tall` then the shard's whole tiles,
/// rows / 160): the straddle's row of tiles first (units 0 .. units_n - 1), then the shards in
/// shard_unit's order, shard 1's tiles rem rows down. (Every box starts inside its shard: a box
/// at a negative row, rem - 80 for the second half, faulted with cudaErrorIllegalInstruction on
/// an H200, session 62.)
struct TTile {
  int shard, row, shard1, row1, height, un;
  bool straddle;
};
SYMMEM_HOST_DEVICE inline TTile t_unit_tile(int u, int rows, int per, int units_n, int count, int first, int group, int tall, int straddle) {
  TTile t;
  if (straddle > 0) {
    if (u < units_n) {
      t.shard = 0;
      t.row = rows - straddle;
      t.shard1 = 1;
      t.row1 = 0;
      t.height = kTallRows;
      t.un = u;
      t.straddle = true;
      return t;
    }
    u -= units_n;
  }
  int block;
  shard_unit(u, per, units_n, count, first, group, t.shard, block, t.un);
  t.row = (straddle > 0 && t.shard == 1 ? straddle : 0) + t_tile_row(block, tall);
  t.height = t_tile_height(block, tall);
  t.shard1 = t.shard;
  t.row1 = t.row + kTallRows / 2;
  t.straddle = false;
  return t;
}

/// The rows [r0, r1) of `shard` that tile t stores and counts (r0 == r1: none): a plain tile's own
/// rows up to the shard's end, the straddle's rem rows in either shard.
SYMMEM_HOST_DEVICE inline void t_tile_rows_in(const TTile& t, int shard, int rows, int straddle, int& r0, int& r1) {
  if (t.straddle) {
    r0 = shard == 0 ? rows - straddle : 0;
    r1 = r0 + straddle;
  } else if (shard == t.shard) {
    r0 = t.row;
    r1 = t.row + t.height < rows ? t.row + t.height : rows;
  } else {
    r0 = r1 = 0;
  }
}

/// The straddle's walk (every unit a 160-row tile): the most units any cluster takes x 160.
inline long t_walk_rows_straddle(int rows, int units_n, int clusters) {
  const long units = (2L * (rows / kTallRows) + 1) * units_n;
  return (units + clusters - 1) / clusters * kTallRows;
}

/// Whether the fused sum's 2 shards take the straddle: where it applies and walks at least 0.5%
/// shorter than t_choose_tall's tiles (t_choose_tall's margin).
inline bool t_choose_straddle(int rows, int count, int units_n, int clusters, int group) {
  if (t_straddle_rows(rows, count) == 0) return false;
  const long tiles = t_walk_rows(rows, count, units_n, clusters, group, t_choose_tall(rows, count, units_n, clusters, group));
  return t_walk_rows_straddle(rows, units_n, clusters) * 200 <= tiles * 199;
}

/// The raster group with row shards: the largest divisor of a shard's units (of a row group's, with
/// row groups: pass rows / groups) up to group_m, so that no group spans two shards (a group
/// reaching into a later shard sets part of a wave waiting for rows still in flight: 2 x H200, 8B
/// at TP = 2, M 2048 196 us against 168).
inline int shard_group(int shard_rows, int cluster, int group_m) {
  const int per_shard = shard_rows / (kBlockRows * cluster);
  int group = group_m;
  while (group > 1 && per_shard % group != 0) --group;
  return group;
}

}  // namespace symmem::overlap::schedule
