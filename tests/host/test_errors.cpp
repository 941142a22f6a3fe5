#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <utility>

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

// A complete device error record: a wait of `kind` by team rank `rank` (global `global_rank`) on
// `peer`, at `slot`, for `cmp expected`, having seen `seen` after `waited_ns`.
static DeviceErrorRecord wait_record(WaitKind kind, int rank, int global_rank, int peer, Cmp cmp, uint64_t slot, uint64_t expected, uint64_t seen,
                              uint64_t waited_ns) {
  DeviceErrorRecord r{};
  r.flag = 2;
  r.kind = static_cast<int>(kind);
  r.rank = rank;
  r.global_rank = global_rank;
  r.peer = peer;
  r.cmp = static_cast<int>(cmp);
  r.slot = slot;
  r.expected = expected;
  r.seen = seen;
  r.waited_ns = waited_ns;
  return r;
}

TEST(Errors, DeviceTimeoutMessageNamesRankPeerAndSlot) {
  std::string m = describe_device_error(wait_record(WaitKind::kSignal, 1, 5, 0, Cmp::kGe, 7, 3, 2, 1500000000ull));
  EXPECT_NE(m.find("rank 5 (team rank 1"), std::string::npos) << m;
  EXPECT_NE(m.find("waited 1500 ms for a signal from team rank 0"), std::string::npos) << m;
  EXPECT_NE(m.find("signal slot 7 >= 3, last value seen 2"), std::string::npos) << m;
}

// The small-round lines' waits, dispatch and combine: the peer, the line (or the combine's header),
// the flags; never read as a capacity report.
TEST(Errors, MoeLinesTimeoutNamesThePeerAndTheLine) {
  for (const auto& [kind, what] : {std::pair{WaitKind::kMoeLines, "dispatch"}, std::pair{WaitKind::kMoeCombineLines, "combine"}}) {
    std::string m = describe_device_error(wait_record(kind, 1, 1, 3, Cmp::kEq, 9, 17, 15, 6000000000ull));
    EXPECT_NE(m.find("device wait timed out: rank 1"), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("a line of the MoE small-round ") + what + " from team rank 3: line 9 of a slot"), std::string::npos) << m;
    EXPECT_NE(m.find("flag 17, last flag seen 15"), std::string::npos) << m;
    EXPECT_EQ(m.find("capacity"), std::string::npos) << m;
  }
  const std::string m = describe_device_error(wait_record(WaitKind::kMoeCombineLines, 2, 2, 1, Cmp::kEq, ~0ull, 4, 3, 6000000000ull));
  EXPECT_NE(m.find("combine from team rank 1: its header line with flag 4"), std::string::npos) << m;
  EXPECT_EQ(m.find("capacity"), std::string::npos) << m;
}

TEST(Errors, MoeRingTimeoutIsATimeoutNotACapacityReport) {
  // The streamed dispatch's and combine's waits (announces, ring words, the send blocks' barrier)
  // time out as waits: named as such, with the peer, never read as an expert over capacity.
  std::string m = describe_device_error(wait_record(WaitKind::kMoeRing, 2, 2, 1, Cmp::kEq, 12, 2ull << 32, (1ull << 32) | 37, 8000000000ull));
  EXPECT_NE(m.find("device wait timed out: rank 2"), std::string::npos) << m;
  EXPECT_NE(m.find("a word of the MoE streamed dispatch"), std::string::npos) << m;
  EXPECT_NE(m.find("from team rank 1"), std::string::npos) << m;
  EXPECT_EQ(m.find("capacity"), std::string::npos) << m;
}

TEST(Errors, WordWaitTimeoutNamesTheWordsOffset) {
  // device::wait_word on a counter in a symmetric buffer: its byte offset there, not a pad slot.
  std::string m = describe_device_error(wait_record(WaitKind::kWord, 0, 4, 1, Cmp::kGe, 4096, 12, 11, 2000000000ull));
  EXPECT_NE(m.find("rank 4 (team rank 0"), std::string::npos) << m;
  EXPECT_NE(m.find("waited 2000 ms for a word of a symmetric buffer (device::wait_word or wait_word_relaxed) from team rank 1"), std::string::npos) << m;
  EXPECT_NE(m.find("the word at byte 4096 >= 12, last value seen 11"), std::string::npos) << m;
  EXPECT_EQ(m.find("signal slot"), std::string::npos) << m;
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
