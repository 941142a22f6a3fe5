// The main job's last lines (bench/fastest.hpp): the fastest method at each size, from the table
// the collectives suite measured, runs of one method merged, one line an operation.
#include <gtest/gtest.h>

#include "../../bench/fastest.hpp"

using symmem::Algo;
using symmem::CollOp;
using symmem::TuningTable;
using symmem::bench::fastest_by_size;
using symmem::bench::human_bytes;

namespace {
constexpr size_t kKiB = 1024, kMiB = kKiB * 1024, kAbove = size_t(1) << 40;
}

TEST(BenchFastest, SizesInWholeUnits) {
  EXPECT_EQ(human_bytes(8), "8 B");
  EXPECT_EQ(human_bytes(1536), "1536 B");
  EXPECT_EQ(human_bytes(kKiB), "1 KiB");
  EXPECT_EQ(human_bytes(16 * kMiB), "16 MiB");
  EXPECT_EQ(human_bytes(size_t(3) << 30), "3 GiB");
  EXPECT_EQ(human_bytes(size_t(2048) << 30), "2048 GiB");
}

TEST(BenchFastest, RunsOfOneMethodMergeAndTheLastCoversEverySizeAbove) {
  TuningTable t;
  t.add({CollOp::kAllReduce, -1, 2, kKiB, Algo::kLL});
  t.add({CollOp::kAllReduce, -1, 2, 64 * kKiB, Algo::kLL});
  t.add({CollOp::kAllReduce, -1, 2, kMiB, Algo::kLL});
  t.add({CollOp::kAllReduce, -1, 2, 4 * kMiB, Algo::kTwoShot});
  t.add({CollOp::kAllReduce, -1, 2, 16 * kMiB, Algo::kTwoShot});
  t.add({CollOp::kAllReduce, -1, 2, kAbove, Algo::kTwoShotPush});
  t.add({CollOp::kBroadcast, -1, 2, kKiB, Algo::kLL});
  t.add({CollOp::kBroadcast, -1, 2, kAbove, Algo::kLL});
  t.add({CollOp::kAllGather, -1, 2, kMiB, Algo::kPush});
  t.add({CollOp::kAllGather, -1, 2, 4 * kMiB, Algo::kNccl});
  t.add({CollOp::kAllGather, -1, 2, 16 * kMiB, Algo::kPush});
  t.add({CollOp::kAllGather, -1, 2, 64 * kMiB, Algo::kNccl});
  EXPECT_EQ(fastest_by_size(t, "> "),
            "> all_reduce      ll to 1 MiB, two_shot to 16 MiB, two_shot_push above\n"
            "> broadcast       ll at every size\n"
            "> all_gather      push to 1 MiB, nccl to 4 MiB, push to 16 MiB, nccl to 64 MiB\n");
}

TEST(BenchFastest, AnEmptyTableSaysNothing) { EXPECT_EQ(fastest_by_size(TuningTable{}), ""); }
