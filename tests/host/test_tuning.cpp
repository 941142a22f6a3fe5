#include <gtest/gtest.h>

#include "symmem/collectives.hpp"
#include "symmem/error.hpp"
#include "symmem/device/workspace.hpp"

using namespace symmem;

TEST(Tuning, DefaultsPickLLSmallAndZeroCopyLarge) {
  TuningTable t = TuningTable::defaults();
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 2, 1024), Algo::kLL);
  EXPECT_NE(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 2, size_t(1) << 30), Algo::kLL);
  EXPECT_EQ(t.lookup(CollOp::kAllToAllV, DataType::kBFloat16, 8, 12345), Algo::kLL);
  // Keyed by team size: 2 ranks keep the write-only two-shot; 4 ranks measured NCCL faster there.
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 2, size_t(1) << 30), Algo::kTwoShotPush);
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 4, size_t(1) << 20), Algo::kLL);  // 12-byte lines (session 9)
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 4, size_t(2) << 20), Algo::kTwoShot);
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 4, size_t(8) << 20), Algo::kTwoShot);  // NCCL from 16 MiB
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 4, size_t(16) << 20), Algo::kNccl);
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 4, size_t(1) << 30), Algo::kNccl);
}

TEST(Tuning, ParseLookupRoundTrip) {
  TuningTable t = TuningTable::parse("# comment\nall_reduce bfloat16 2 4096 ll\nall_reduce * * 1073741824 two_shot  # trailing\n", "test");
  ASSERT_EQ(t.entries().size(), 2u);
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 2, 4096), Algo::kLL);
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kFloat32, 2, 4096), Algo::kTwoShot);
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 2, size_t(2) << 30), Algo::kNccl);
  EXPECT_EQ(t.lookup(CollOp::kAllGather, DataType::kBFloat16, 2, 1), Algo::kNccl);
  TuningTable u = TuningTable::parse(t.to_text(), "round trip");
  EXPECT_EQ(u.to_text(), t.to_text());
}

TEST(Tuning, ErrorsNameFileAndLine) {
  try {
    TuningTable::parse("all_reduce * * 10 ll\nall_reduce * * 10 warp_speed\n", "mytable");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("mytable:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown algorithm 'warp_speed'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TuningTable::parse("all_reduce * *\n", "t"), InvalidArgument);
  EXPECT_THROW(TuningTable::parse("all_reduce * * 10 auto\n", "t"), InvalidArgument);
  EXPECT_THROW(TuningTable::load("/nonexistent/table"), InvalidArgument);
}

TEST(Tuning, AlgorithmFitRules) {
  using detail::algo_unfit;
  EXPECT_EQ(algo_unfit(CollOp::kAllReduce, Algo::kLL, false, false, false, 1024, 4096), "");
  EXPECT_NE(algo_unfit(CollOp::kAllReduce, Algo::kLL, false, false, false, 8192, 4096), "");
  EXPECT_NE(algo_unfit(CollOp::kAllReduce, Algo::kOneShot, false, true, false, 0, 0), "");
  EXPECT_NE(algo_unfit(CollOp::kAllReduce, Algo::kOneShot, true, true, true, 0, 0), "");
  EXPECT_EQ(algo_unfit(CollOp::kAllReduce, Algo::kTwoShot, true, true, true, 0, 0), "");
  EXPECT_NE(algo_unfit(CollOp::kAllReduce, Algo::kDirect, true, true, false, 0, 0), "");
  EXPECT_EQ(algo_unfit(CollOp::kAllGather, Algo::kDirect, true, false, false, 0, 0), "");
  EXPECT_NE(algo_unfit(CollOp::kAllToAll, Algo::kDirect, true, true, true, 0, 0), "");
  EXPECT_NE(algo_unfit(CollOp::kAllToAllV, Algo::kNccl, true, true, false, 0, 0), "");
  // Reductions of 8-byte elements travel in narrow lines only: two thirds of the slot.
  const size_t MiB = size_t(1) << 20, narrow = ws::ll_lines(MiB) * ws::kLLNarrow;
  EXPECT_TRUE(detail::ll_narrow_only(CollOp::kAllReduce, DataType::kInt64));
  EXPECT_TRUE(detail::ll_narrow_only(CollOp::kReduceScatter, DataType::kFloat64));
  EXPECT_FALSE(detail::ll_narrow_only(CollOp::kAllGather, DataType::kUInt64));  // (moved as bytes)
  EXPECT_FALSE(detail::ll_narrow_only(CollOp::kAllReduce, DataType::kFloat32));
  EXPECT_EQ(detail::ll_capacity_for(CollOp::kAllReduce, DataType::kUInt64, MiB), narrow);
  EXPECT_EQ(detail::ll_capacity_for(CollOp::kAllReduce, DataType::kInt32, MiB), MiB);
  EXPECT_EQ(algo_unfit(CollOp::kAllReduce, Algo::kLL, false, false, false, narrow, MiB, 2, DataType::kInt64), "");
  EXPECT_NE(algo_unfit(CollOp::kAllReduce, Algo::kLL, false, false, false, narrow + 8, MiB, 2, DataType::kInt64).find("8-byte lines"),
            std::string::npos);
  EXPECT_EQ(algo_unfit(CollOp::kAllReduce, Algo::kLL, false, false, false, narrow + 8, MiB, 2, DataType::kInt32), "");
  // (push stages raw bytes: its capacity is the type's whatever the width)
  EXPECT_EQ(algo_unfit(CollOp::kAllReduce, Algo::kPush, false, false, false, 2 * MiB, MiB, 2, DataType::kInt64), "");
  // No two-shot LL for them (its lines are wide).
  EXPECT_GT(detail::ll_two_shot_chunk(600000, 4, ws::ll_lines(MiB), DataType::kFloat32), 0u);
  EXPECT_EQ(detail::ll_two_shot_chunk(600000, 4, ws::ll_lines(MiB), DataType::kFloat64), 0u);
}

TEST(Types, NamesParse) {
  EXPECT_EQ(parse_dtype("bf16"), DataType::kBFloat16);
  EXPECT_EQ(parse_dtype("float"), DataType::kFloat32);
  EXPECT_EQ(parse_dtype("fp8_e5m2"), DataType::kFp8E5M2);
  EXPECT_EQ(parse_redop("avg"), ReduceOp::kAvg);
  EXPECT_THROW(parse_dtype("float128"), InvalidArgument);
  EXPECT_EQ(dtype_size(DataType::kFp8E4M3), 1u);
  // NCCL's types, by nccl-tests' names.
  EXPECT_EQ(parse_dtype("int8"), DataType::kInt8);
  EXPECT_EQ(parse_dtype("uint8"), DataType::kUInt8);
  EXPECT_EQ(parse_dtype("uint32"), DataType::kUInt32);
  EXPECT_EQ(parse_dtype("int64"), DataType::kInt64);
  EXPECT_EQ(parse_dtype("uint64"), DataType::kUInt64);
  EXPECT_EQ(parse_dtype("double"), DataType::kFloat64);
  EXPECT_EQ(parse_dtype("float64"), DataType::kFloat64);
  EXPECT_EQ(dtype_size(DataType::kInt8), 1u);
  EXPECT_EQ(dtype_size(DataType::kUInt32), 4u);
  for (DataType d : {DataType::kInt64, DataType::kUInt64, DataType::kFloat64}) EXPECT_EQ(dtype_size(d), 8u);
  for (int i = 0; i <= static_cast<int>(kLastDataType); ++i) {  // every type is named, and reduces
    EXPECT_EQ(parse_dtype(dtype_name(static_cast<DataType>(i))), static_cast<DataType>(i));
    EXPECT_TRUE(reducible(static_cast<DataType>(i)));
  }
  EXPECT_FALSE(valid_dtype(static_cast<DataType>(static_cast<int>(kLastDataType) + 1)));
  EXPECT_EQ(std::string(algo_name(Algo::kTwoShot)), "two_shot");
  // A value cast from an integer outside the enum is named, not read past the table.
  EXPECT_EQ(std::string(dtype_name(static_cast<DataType>(99))), "invalid");
  EXPECT_EQ(std::string(redop_name(static_cast<ReduceOp>(-1))), "invalid");
}

// kAuto's choice, as every rank computes it: the table first, then the fallbacks.
TEST(Tuning, AutoChoiceAndFallbacks) {
  using detail::choose_algo;
  const TuningTable t = TuningTable::defaults();
  const DataType bf = DataType::kBFloat16;
  const size_t ll = size_t(1) << 20, MiB = size_t(1) << 20;
  // 4 ranks, symmetric buffers: the measured choices.
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, 1024, true, true, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, 256 * 1024, true, true, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, MiB, true, true, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, 2 * MiB, true, true, false, true, ll), Algo::kTwoShot);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, 64 * MiB, true, true, false, true, ll), Algo::kNccl);
  // NCCL absent (ranks share a GPU): symmetric buffers take the zero-copy path instead.
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, 64 * MiB, true, true, false, false, ll), Algo::kTwoShot);
  // Ordinary buffers past LL's capacity: NCCL; without NCCL, push (up to 2 x ll through the workspace).
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, MiB + MiB / 2, false, false, false, true, ll), Algo::kNccl);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, MiB + MiB / 2, false, false, false, false, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 4, 64 * MiB, false, false, false, true, ll), Algo::kNccl);
  // One_shot in place is not allowed: in place two_shot runs.
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, 8 * MiB, true, true, true, true, ll), Algo::kTwoShot);
  // 2 ranks: ll to 1 MiB; above, to 4 MiB, one_shot out of place from a symmetric input; in place
  // or from an ordinary input what the table held before (push to 2 x ll, then two_shot).
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, 512 * 1024, true, true, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, MiB, true, true, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, MiB + 8, true, true, false, true, ll), Algo::kOneShot);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, 4 * MiB, true, false, false, true, ll), Algo::kOneShot);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, MiB, true, true, true, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, MiB, false, false, false, true, ll), Algo::kLL);
  // 8-byte reductions past the narrow lines' capacity (two thirds of ll): the table's band past
  // LL's (its fallbacks where the buffers do not fit it).
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, DataType::kInt64, 2, 512 * 1024, false, false, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, DataType::kInt64, 2, MiB, true, true, false, true, ll), Algo::kOneShot);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, DataType::kInt64, 2, MiB, false, false, false, true, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, DataType::kFloat64, 4, MiB, true, true, false, true, ll), Algo::kTwoShot);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, DataType::kFloat64, 4, MiB, false, false, false, false, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kReduceScatter, DataType::kUInt64, 2, 2 * MiB, true, false, false, true, ll), Algo::kDirect);
  EXPECT_EQ(choose_algo(t, CollOp::kReduceScatter, DataType::kUInt64, 2, 2 * MiB, false, false, false, true, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kAllGather, DataType::kFloat64, 2, 2 * MiB, false, true, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, 2 * MiB, true, true, true, true, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, 2 * MiB, false, false, false, true, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, 4 * MiB, true, true, true, true, ll), Algo::kTwoShot);
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, 4 * MiB, false, false, false, true, ll), Algo::kNccl);
  // Reduce-scatter at 2 ranks: ll to its capacity (1 MiB a peer), direct above from a symmetric
  // input; from an ordinary one push while it fits (2 x ll a peer), then NCCL. Sizes the table
  // gives ll that a smaller ll capacity cannot carry go to NCCL (as every ll entry's).
  EXPECT_EQ(choose_algo(t, CollOp::kReduceScatter, bf, 2, 2 * MiB, false, false, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kReduceScatter, bf, 2, 2 * MiB + 16, true, false, false, true, ll), Algo::kDirect);
  EXPECT_EQ(choose_algo(t, CollOp::kReduceScatter, bf, 2, 2 * MiB + 16, false, false, false, true, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kReduceScatter, bf, 2, 2 * MiB, true, true, false, true, ll / 2), Algo::kNccl);
  // All-gather and all-to-all at 2 ranks: ll to 2 MiB (1 MiB a peer), push above.
  EXPECT_EQ(choose_algo(t, CollOp::kAllGather, bf, 2, 2 * MiB, true, true, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kAllGather, bf, 2, 4 * MiB, true, true, false, true, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kAllToAll, bf, 2, 2 * MiB, false, false, false, true, ll), Algo::kLL);
  EXPECT_EQ(choose_algo(t, CollOp::kReduceScatter, bf, 2, 4 * MiB, false, true, false, true, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kReduceScatter, bf, 2, 8 * MiB, false, false, false, true, ll), Algo::kNccl);
  // two_shot_push needs a symmetric output and not in place: 2 ranks fall back to two_shot.
  EXPECT_EQ(choose_algo(t, CollOp::kAllReduce, bf, 2, 256 * MiB, true, true, true, true, ll), Algo::kTwoShot);
  // Broadcast decides from `out` alone: never direct in auto.
  EXPECT_EQ(choose_algo(t, CollOp::kBroadcast, bf, 2, 8 * MiB, false, true, false, true, ll), Algo::kPush);
  EXPECT_EQ(choose_algo(t, CollOp::kBroadcast, bf, 4, 8 * MiB, false, true, false, true, ll), Algo::kNccl);
  // At 2 ranks push at every size past ll's (since session 70's patient barrier); NCCL where push cannot.
  EXPECT_EQ(choose_algo(t, CollOp::kBroadcast, bf, 2, 128 * MiB, false, true, false, true, ll), Algo::kPush);
  // all-gather with an ordinary output at 4 ranks, 64 MiB: push cannot (writes peers' outputs), direct pulls.
  EXPECT_EQ(choose_algo(t, CollOp::kAllGather, bf, 4, 64 * MiB, true, false, false, true, ll), Algo::kDirect);
  // all_to_all_v: ll (which turns direct on the GPU when a split is large).
  EXPECT_EQ(choose_algo(t, CollOp::kAllToAllV, bf, 8, 64 * MiB, true, false, false, true, ll), Algo::kLL);
}

// The rooted operations: names, the algorithms each takes, and auto's choice from the buffer every
// rank passes (reduce and gather: in; scatter: out; the caller passes false for the other).
TEST(Tuning, RootedOperations) {
  using detail::algo_unfit;
  using detail::choose_algo;
  for (CollOp op : {CollOp::kReduce, CollOp::kGather, CollOp::kScatter}) {
    EXPECT_EQ(parse_coll(coll_name(op)), op);
    EXPECT_TRUE(coll_rooted(op));
  }
  EXPECT_EQ(std::string(coll_name(CollOp::kGather)), "gather");
  EXPECT_EQ(std::string(coll_name(static_cast<CollOp>(42))), "invalid");
  EXPECT_TRUE(coll_rooted(CollOp::kBroadcast));
  EXPECT_FALSE(coll_rooted(CollOp::kAllGather));
  EXPECT_TRUE(coll_reducing(CollOp::kReduce));
  EXPECT_FALSE(coll_reducing(CollOp::kGather));
  // reduce: ll, one_shot (symmetric input; in place too: only the root writes), nccl.
  EXPECT_EQ(algo_unfit(CollOp::kReduce, Algo::kOneShot, true, false, true, 0, 0), "");
  EXPECT_NE(algo_unfit(CollOp::kReduce, Algo::kOneShot, false, true, false, 0, 0), "");
  for (Algo a : {Algo::kPush, Algo::kDirect, Algo::kTwoShot, Algo::kTwoShotPush})
    EXPECT_NE(algo_unfit(CollOp::kReduce, a, true, true, false, 0, 0), "") << algo_name(a);
  EXPECT_EQ(algo_unfit(CollOp::kReduce, Algo::kNccl, false, false, false, 0, 0), "");
  // gather and scatter: direct pulls (a symmetric input), push writes (a symmetric output).
  for (CollOp op : {CollOp::kGather, CollOp::kScatter}) {
    EXPECT_EQ(algo_unfit(op, Algo::kDirect, true, false, false, 0, 0), "");
    EXPECT_NE(algo_unfit(op, Algo::kDirect, false, true, false, 0, 0), "");
    EXPECT_EQ(algo_unfit(op, Algo::kPush, false, true, true, 0, 0), "");
    EXPECT_NE(algo_unfit(op, Algo::kPush, true, false, false, 0, 0), "");
    EXPECT_NE(algo_unfit(op, Algo::kOneShot, true, true, false, 0, 0), "");
  }
  // 8-byte reductions travel in narrow lines, as the all-reduce's.
  const size_t MiB = size_t(1) << 20, ll = MiB;
  EXPECT_TRUE(detail::ll_narrow_only(CollOp::kReduce, DataType::kFloat64));
  EXPECT_FALSE(detail::ll_narrow_only(CollOp::kGather, DataType::kFloat64));
  EXPECT_NE(algo_unfit(CollOp::kReduce, Algo::kLL, false, false, false, 800 * 1024, ll, 2, DataType::kInt64), "");
  EXPECT_EQ(algo_unfit(CollOp::kGather, Algo::kLL, false, false, false, 800 * 1024, ll, 2, DataType::kInt64), "");
  const TuningTable t = TuningTable::defaults();
  const DataType bf = DataType::kBFloat16;
  for (int n : {2, 4}) {
    // reduce: ll small; a symmetric input one_shot above; an ordinary one NCCL (none: refused later).
    EXPECT_EQ(choose_algo(t, CollOp::kReduce, bf, n, 64 * 1024, false, false, false, true, ll), Algo::kLL);
    EXPECT_EQ(choose_algo(t, CollOp::kReduce, bf, n, 8 * MiB, true, false, false, true, ll), Algo::kOneShot);
    EXPECT_EQ(choose_algo(t, CollOp::kReduce, bf, n, 8 * MiB, false, false, false, true, ll), Algo::kNccl);
    EXPECT_EQ(choose_algo(t, CollOp::kReduce, bf, n, 8 * MiB, false, false, false, false, ll), Algo::kNccl);
    // gather: ll to 1 MiB a peer; a symmetric input direct above, an ordinary one NCCL.
    EXPECT_EQ(choose_algo(t, CollOp::kGather, bf, n, n * MiB / 2, true, false, false, true, ll), Algo::kLL);
    EXPECT_EQ(choose_algo(t, CollOp::kGather, bf, n, 4 * n * MiB, true, false, false, true, ll), Algo::kDirect);
    EXPECT_EQ(choose_algo(t, CollOp::kGather, bf, n, 4 * n * MiB, false, false, false, true, ll), Algo::kNccl);
    // scatter: ll to 1 MiB a peer; a symmetric output push above, an ordinary one NCCL.
    EXPECT_EQ(choose_algo(t, CollOp::kScatter, bf, n, n * MiB / 2, false, true, false, true, ll), Algo::kLL);
    EXPECT_EQ(choose_algo(t, CollOp::kScatter, bf, n, 4 * n * MiB, false, true, false, true, ll), Algo::kPush);
    EXPECT_EQ(choose_algo(t, CollOp::kScatter, bf, n, 4 * n * MiB, false, false, false, true, ll), Algo::kNccl);
  }
  // 8-byte reduce past the narrow capacity: the table's next band.
  EXPECT_EQ(choose_algo(t, CollOp::kReduce, DataType::kFloat64, 2, MiB, true, false, false, true, ll), Algo::kOneShot);
  // LL grids of rooted operations stay one block an SM (one rank alone sends or receives data).
  EXPECT_EQ(detail::ll_grid(87382, 2, CollOp::kReduce, 132, 512), 128);
  EXPECT_EQ(detail::ll_grid(87382, 2, CollOp::kScatter, 132, 512), 128);
}

// LL grids: one block while a line a thread fits, ~64 lines a block above, up to 128 blocks (or the
// SMs); at 2 ranks up to two blocks an SM but for broadcast. Only shared facts go in.
TEST(Tuning, LLGrid) {
  using detail::ll_grid;
  EXPECT_EQ(ll_grid(512, 2, CollOp::kAllReduce, 132, 512), 1);
  EXPECT_EQ(ll_grid(513, 4, CollOp::kAllReduce, 132, 512), 9);
  EXPECT_EQ(ll_grid(8192, 4, CollOp::kAllGather, 132, 512), 128);
  EXPECT_EQ(ll_grid(87382, 4, CollOp::kAllReduce, 132, 512), 128);  // 1 MiB of wide lines
  EXPECT_EQ(ll_grid(87382, 4, CollOp::kAllReduce, 100, 512), 100);
  EXPECT_EQ(ll_grid(87382, 2, CollOp::kAllReduce, 132, 512), 264);  // one pass: 264 x 512 >= 87382
  EXPECT_EQ(ll_grid(87382, 2, CollOp::kReduceScatter, 100, 512), 200);
  EXPECT_EQ(ll_grid(87382, 2, CollOp::kBroadcast, 132, 512), 128);
  EXPECT_EQ(ll_grid(12000, 2, CollOp::kAllToAll, 132, 512), 188);
}

// LL all-reduce's form: one-shot up to 256 KiB or at 2 ranks, else two-shot over chunks of whole
// 8-byte words, every chunk non-empty, both halves within the slot.
TEST(Tuning, LLTwoShotChunk) {
  using detail::ll_two_shot_chunk;
  const size_t lines = ws::ll_lines(size_t(1) << 20);  // a slot of 1 MiB of payload
  EXPECT_EQ(ll_two_shot_chunk(256 * 1024, 4, lines), 0u);
  EXPECT_EQ(ll_two_shot_chunk(512 * 1024, 2, lines), 0u);
  EXPECT_EQ(ll_two_shot_chunk(512 * 1024, 4, lines), 128u * 1024);
  const size_t odd = 300001 * 2;  // bf16, not a multiple of 4 x 8
  const size_t c = ll_two_shot_chunk(odd, 3, lines);
  EXPECT_EQ(c % 8, 0u);
  EXPECT_GE(3 * c, odd);
  EXPECT_LT(2 * c, odd);
  EXPECT_EQ(ll_two_shot_chunk(512 * 1024, 4, 8), 0u);  // a slot too small: one-shot
}

// A Communicator warns where ranks share a GPU though each could have its own (the device left at
// its default), unless SYMMEM_RANKS_PER_GPU asks for sharing.
TEST(Communicator, SharingAGpuIsCalledOutWhereItLooksUnmeant) {
  using symmem::detail::sharing_unmeant;
  EXPECT_TRUE(sharing_unmeant(true, 8, 8, nullptr));    // 8 ranks on GPU 0 of 8
  EXPECT_TRUE(sharing_unmeant(true, 4, 2, "1"));
  EXPECT_TRUE(sharing_unmeant(true, 4, 2, ""));
  EXPECT_FALSE(sharing_unmeant(false, 8, 8, nullptr));  // a GPU each
  EXPECT_FALSE(sharing_unmeant(true, 1, 2, nullptr));   // too few GPUs: sharing is the only way
  EXPECT_FALSE(sharing_unmeant(true, 4, 8, nullptr));   // 8 ranks on 4 GPUs
  EXPECT_FALSE(sharing_unmeant(true, 4, 2, "2"));       // asked for (symmem-run --ranks-per-gpu 2)
}
