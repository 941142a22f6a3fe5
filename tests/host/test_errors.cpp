#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "symmem/context.hpp"
#include "symmem/error.hpp"

using namespace symmem;

TEST(Errors, CudaCheckRecordsExpressionFileLineAndRank) {
  detail::error_rank() = 3;
  try {
    SYMMEM_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL();
  } catch (const CudaError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("[symmem rank 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("cudaErrorInvalidValue"), std::string::npos) << m;
    EXPECT_NE(m.find("test_errors.cpp:"), std::string::npos) << m;
  }
  detail::error_rank() = -1;
}

TEST(Errors, HierarchyCatchesAsError) {
  EXPECT_THROW(throw Timeout("x"), Error);
  EXPECT_THROW(throw PeerLost("x"), Error);
  EXPECT_THROW(throw InvalidArgument("x"), std::runtime_error);
}

TEST(Errors, RequireWritesItsPartsOnlyOnFailure) {
  EXPECT_NO_THROW(require(true, "all_reduce", ": count=", size_t{7}, " is too large"));
  detail::error_rank() = 2;
  try {
    require(false, "all_reduce", ": out is not aligned to its dtype (", size_t{4}, " bytes), rank ", -1, std::string(" ok"));
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "[symmem rank 2] all_reduce: out is not aligned to its dtype (4 bytes), rank -1 ok");
  }
  detail::error_rank() = -1;
}

TEST(Errors, DeviceTimeoutMessageNamesRankPeerAndSlot) {
  DeviceErrorRecord r{};
  r.flag = 2;
  r.kind = static_cast<int>(WaitKind::kSignal);
  r.rank = 1;
  r.global_rank = 5;
  r.peer = 0;
  r.cmp = static_cast<int>(Cmp::kGe);
  r.slot = 7;
  r.expected = 3;
  r.seen = 2;
  r.waited_ns = 1500000000ull;
  std::string m = describe_device_error(r);
  EXPECT_NE(m.find("rank 5 (team rank 1"), std::string::npos) << m;
  EXPECT_NE(m.find("waited 1500 ms for a signal from team rank 0"), std::string::npos) << m;
  EXPECT_NE(m.find("signal slot 7 >= 3, last value seen 2"), std::string::npos) << m;
}

TEST(Errors, MoeRingTimeoutIsATimeoutNotACapacityReport) {
  // The streamed dispatch's waits (announces, ring words, its send blocks' barrier) time out as
  // waits: named as such, with the peer, never read as an expert over capacity.
  DeviceErrorRecord r{};
  r.flag = 2;
  r.kind = static_cast<int>(WaitKind::kMoeRing);
  r.rank = 2;
  r.global_rank = 2;
  r.peer = 1;
  r.cmp = static_cast<int>(Cmp::kEq);
  r.slot = 12;
  r.expected = 2ull << 32;
  r.seen = (1ull << 32) | 37;
  r.waited_ns = 8000000000ull;
  std::string m = describe_device_error(r);
  EXPECT_NE(m.find("device wait timed out: rank 2"), std::string::npos) << m;
  EXPECT_NE(m.find("a word of the MoE streamed dispatch"), std::string::npos) << m;
  EXPECT_NE(m.find("from team rank 1"), std::string::npos) << m;
  EXPECT_EQ(m.find("capacity"), std::string::npos) << m;
}

TEST(Errors, NoGpuGivesAClearError) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) GTEST_SKIP() << "a GPU is present";
  (void)cudaGetLastError();
  BootstrapConfig c;
  try {
    Context ctx(std::make_shared<Bootstrap>(c));
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA GPU is visible"), std::string::npos) << e.what();
  }
}
