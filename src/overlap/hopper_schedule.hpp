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
