#include <gtest/gtest.h>

#include "symmem/collectives.hpp"
#include "symmem/error.hpp"

using namespace symmem;

TEST(Tuning, DefaultsPickLLSmallAndZeroCopyLarge) {
  TuningTable t = TuningTable::defaults();
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 2, 1024), Algo::kLL);
  EXPECT_NE(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 2, size_t(1) << 30), Algo::kLL);
  EXPECT_EQ(t.lookup(CollOp::kAllToAllV, DataType::kBFloat16, 8, 12345), Algo::kLL);
  // Keyed by team size: 2 ranks keep the write-only two-shot; 4 ranks measured NCCL faster there.
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 2, size_t(1) << 30), Algo::kTwoShotPush);
  EXPECT_EQ(t.lookup(CollOp::kAllReduce, DataType::kBFloat16, 4, size_t(1) << 20), Algo::kTwoShot);
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
}

TEST(Types, NamesParse) {
  EXPECT_EQ(parse_dtype("bf16"), DataType::kBFloat16);
  EXPECT_EQ(parse_dtype("float"), DataType::kFloat32);
  EXPECT_EQ(parse_dtype("fp8_e5m2"), DataType::kFp8E5M2);
  EXPECT_EQ(parse_redop("avg"), ReduceOp::kAvg);
  EXPECT_THROW(parse_dtype("float128"), InvalidArgument);
  EXPECT_EQ(dtype_size(DataType::kFp8E4M3), 1u);
  EXPECT_EQ(std::string(algo_name(Algo::kTwoShot)), "two_shot");
}
