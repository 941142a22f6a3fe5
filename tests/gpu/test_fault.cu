// Faults: waits that can never be met end in symmem::Timeout naming rank, peer and slot (or word),
// within the configured bound; a communicator that timed out is failed and says so; abort never
// hangs; an NCCL call a peer skipped is ended by the watchdog. Any number of ranks: the last rank
// is the one that skips a call or dies, the others wait on it (the last test ends that rank, and
// skips where the filter selects a test after it). The ranks agree on each verdict, except in the
// last test, where a rank is gone and with it the rendezvous store's exchanges: there each
// survivor judges its own (every one of them asserts).
#include <unistd.h>

#include <chrono>

#include "gpu_env.hpp"
#include "symmem/device.cuh"

using namespace symmem;
using namespace symmem::test;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// The name of the first test that the filter selects after the one running now ("" where it is
// the last). Every rank runs one binary under one filter, so every rank finds the same.
std::string next_selected_test() {
  const auto* unit = ::testing::UnitTest::GetInstance();
  const auto* now = unit->current_test_info();
  bool past = false;
  for (int i = 0; i < unit->total_test_suite_count(); ++i) {
    const auto* suite = unit->GetTestSuite(i);
    for (int j = 0; j < suite->total_test_count(); ++j) {
      const auto* t = suite->GetTestInfo(j);
      if (past && t->should_run()) return std::string(t->test_suite_name()) + "." + t->name();
      if (t == now) past = true;
    }
  }
  return "";
}
// "" where call() raises symmem::Timeout naming every one of `words`; else what happened.
template <class F>
std::string timeout_naming(F&& call, const std::vector<std::string>& words) {
  try {
    call();
    return "no Timeout raised; ";
  } catch (const Timeout& e) {
    std::string missing;
    for (const auto& w : words)
      if (std::string(e.what()).find(w) == std::string::npos) missing += " '" + w + "'";
    return missing.empty() ? "" : "the Timeout '" + std::string(e.what()) + "' does not name" + missing + "; ";
  } catch (const std::exception& e) {
    return std::string("another error than Timeout: ") + e.what() + "; ";
  }
}
}  // namespace

// A wait nobody meets, under a 1.5 s bound: the Timeout names `words` and comes within 8 s, and
// the context is usable after (every rank alike). `what` names the synchronize.
template <class F>
std::string unmet_wait(const char* what, F&& enqueue, const std::vector<std::string>& words) {
  ctx()->set_device_timeout_ms(1500);
  const auto t0 = std::chrono::steady_clock::now();
  enqueue();
  std::string msg = timeout_naming([&] { ctx()->synchronize(nullptr, what); }, words);
  if (seconds_since(t0) >= 8.0) msg += "the timeout took " + std::to_string(seconds_since(t0)) + " s; ";
  ctx()->reset_error();
  heap().team().barrier(std::string("after ") + what);
  return msg;
}

// The tests' agreed_step (gpu_env.hpp): a step that fails on one rank only, by what it returns, by
// what it throws or by a timeout left in the Context, stops every rank after that step with one
// report naming that rank, and the Context's error record is clear after it on every rank.
TEST(Fault, AgreedStepsStopEveryRankTogether) {
  const int n = ctx()->size(), me = ctx()->rank();
  std::string msg, r;
  int steps = 0;
  for (int it = 0; it < 3 && r.empty(); ++it, ++steps)
    r = agreed_step([&] { return it == 1 && me == n - 1 ? std::string("planted") : std::string(); });
  if (steps != 2) msg += "the ranks ran " + std::to_string(steps) + " steps, not 2; ";
  if (r != "\n  rank " + std::to_string(n - 1) + ": planted") msg += "a returned failure reads '" + r + "'; ";
  r = agreed_step([&]() -> std::string {
    if (me == 0) throw std::runtime_error("thrown");
    return "";
  });
  if (r != "\n  rank 0: thrown") msg += "a thrown failure reads '" + r + "'; ";
  r = agreed_step([&]() -> std::string {
    if (me == 0) {
      ctx()->fail_waits("a planted timeout");
      ctx()->check("the step");
    }
    return "";
  });
  if (r.rfind("\n  rank 0: ", 0) != 0 || r.find("the step: a planted timeout") == std::string::npos) msg += "a timeout reads '" + r + "'; ";
  const std::string after = attempt([&] { ctx()->check("after the step"); });
  if (!after.empty()) msg += "the record was not cleared: " + after + "; ";
  r = agreed_step([&] { return std::string("alike"); });
  std::string all = n > 1 ? "\n  ranks 0" : "\n  rank 0";
  for (int q = 1; q < n; ++q) all += ", " + std::to_string(q);
  if (r != all + ": alike") msg += "one failure on every rank reads '" + r + "'; ";
  ASSERT_ALL(msg.empty(), msg);
}

TEST(Fault, UnmetSignalWaitTimesOutWithFacts) {
  SymmetricBuffer b = heap().alloc(64);  // made before the bound is set: the bound is a run-time setting
  const std::string msg = unmet_wait("waiting on slot 9", [&] { stream::wait(b, 9, Cmp::kGe, 1, nullptr); },  // nobody signals slot 9
                                     {"waiting on slot 9: device wait timed out: rank " + std::to_string(ctx()->rank()),
                                      "signal slot 9 >= 1, last value seen 0"});
  heap().free(b);
  ASSERT_ALL(msg.empty(), msg);
}

__global__ void wait_word_kernel(DeviceHandle h, const uint64_t* word) { device::wait_word(h, word, Cmp::kGe, 1, (h.rank + 1) % h.nranks); }

TEST(Fault, UnmetWordWaitTimesOutNamingTheWord) {
  SymmetricBuffer b = heap().alloc(4096);
  SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), 0, 4096));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::string msg = unmet_wait("waiting on a word", [&] { wait_word_kernel<<<1, 1>>>(b.handle(), b.as<uint64_t>() + 300); },  // nobody adds to it
                                     {"a word of a symmetric buffer (device::wait_word or wait_word_relaxed) from team rank " +
                                          std::to_string((ctx()->rank() + 1) % ctx()->size()),
                                      "the word at byte 2400 >= 1, last value seen 0"});
  heap().free(b);
  ASSERT_ALL(msg.empty(), msg);
}

// The relaxed waits (device::wait_signal_relaxed, wait_word_relaxed) are bounded alike and name
// the same facts.
__global__ void wait_relaxed_kernel(DeviceHandle h, const uint64_t* word) {
  if (word == nullptr) device::wait_signal_relaxed(h, 9, Cmp::kGe, 1, (h.rank + 1) % h.nranks);
  else device::wait_word_relaxed(h, word, Cmp::kEq, 7, (h.rank + 1) % h.nranks);
}

TEST(Fault, UnmetRelaxedWaitsTimeOutWithFacts) {
  SymmetricBuffer b = heap().alloc(4096);
  SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), 0, 4096));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::string peer = std::to_string((ctx()->rank() + 1) % ctx()->size());
  std::string msg = unmet_wait("a relaxed signal wait", [&] { wait_relaxed_kernel<<<1, 1>>>(b.handle(), nullptr); },
                               {"a relaxed signal wait: device wait timed out: rank " + std::to_string(ctx()->rank()),
                                "signal slot 9 >= 1, last value seen 0", "team rank " + peer});
  msg += unmet_wait("a relaxed word wait", [&] { wait_relaxed_kernel<<<1, 1>>>(b.handle(), b.as<uint64_t>() + 5); },
                    {"(device::wait_word or wait_word_relaxed) from team rank " + peer, "the word at byte 40 == 7, last value seen 0"});
  heap().free(b);
  ASSERT_ALL(msg.empty(), msg);
}

TEST(Fault, CommunicatorFailsAfterTimeoutAndAbortReturns) {
  auto c = std::make_unique<Communicator>(ctx());
  if (c->size() < 2) {
    c.reset();
    GTEST_SKIP() << "needs 2 or more ranks (one skips a call the others wait on)";
  }
  ctx()->set_device_timeout_ms(1500);
  DeviceBuffer in(4096), out(4096);
  SYMMEM_CUDA_CHECK(cudaMemset(in.p, 0, 4096));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const int me = c->rank(), skipper = c->size() - 1;
  std::string msg;
  if (ctx()->settings().debug_checks) {
    // Under SYMMEM_DEBUG_CHECKS=1 every call is agreed on the host before it launches: the skipped
    // call never reaches the GPU. The skipper's next exchange of the team, its barrier below, meets
    // the others' agreement, which names it and its barrier on their ranks (it passes its barrier:
    // the exchange is spent there on every rank alike, so the ranks stay in step).
    if (me != skipper) {
      const std::string e = attempt([&] { c->all_reduce(in.p, out.p, 1024, DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kLL); });
      const std::string want = "rank " + std::to_string(heap().team().global_rank(skipper)) +
                               " is not making this call: it made the barrier 'after abort'";
      if (e.find(want) == std::string::npos) msg += "the call rank " + std::to_string(skipper) + " skipped: '" + e + "', not '" + want + "'; ";
    }
    c->abort();
    c.reset();
    ctx()->reset_error();  // (abort marked the context: the next test must not see it)
    if (me == skipper) heap().team().barrier("after abort");
    ASSERT_ALL(msg.empty(), msg);
    return;
  }
  if (me != skipper) {
    // The last rank skips this call: every other rank waits for its LL lines until the bound.
    c->all_reduce(in.p, out.p, 1024, DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kLL);
    const std::string what = "all_reduce rank " + std::to_string(skipper) + " skipped";
    msg += timeout_naming([&] { ctx()->synchronize(nullptr, what); }, {what, "from team rank " + std::to_string(skipper)});
    // Every later call raises, saying the communicator failed.
    for (int call = 0; call < 2; ++call) {
      const std::string e = attempt([&] { c->all_reduce(in.p, out.p, 1024, DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kLL); });
      if (e.find(call == 0 ? "this communicator is failed" : "failed earlier") == std::string::npos)
        msg += "call " + std::to_string(call) + " after the timeout: '" + e + "'; ";
    }
    if (c->failure().empty()) msg += "failure() is empty; ";
  }
  auto t0 = std::chrono::steady_clock::now();
  c->abort();
  c.reset();
  if (seconds_since(t0) >= 5.0) msg += "abort and destruction took " + std::to_string(seconds_since(t0)) + " s: they must not wait for peers; ";
  ctx()->reset_error();
  heap().team().barrier("after abort");
  ASSERT_ALL(msg.empty(), msg);
}

TEST(Fault, NcclCallSkippedByAPeerIsEndedByTheWatchdog) {
  auto c = std::make_unique<Communicator>(ctx());
  if (c->size() < 2 || !c->has_nccl()) {
    const bool alone = c->size() < 2;
    c.reset();
    GTEST_SKIP() << (alone ? "needs 2 or more ranks (one skips a call the others wait on)" : "ranks share a GPU: no NCCL communicator");
  }
  ctx()->set_device_timeout_ms(1500);
  DeviceBuffer in(4096), out(4096);
  SYMMEM_CUDA_CHECK(cudaMemset(in.p, 0, 4096));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  // One call every rank makes, then one that the last rank skips.
  c->all_reduce(in.p, out.p, 1024, DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kNccl);
  ctx()->synchronize(nullptr, "NCCL all_reduce on every rank");
  heap().team().barrier("before the skipped NCCL call");
  auto t0 = std::chrono::steady_clock::now();
  std::string msg;
  if (c->rank() != c->size() - 1) {
    c->all_reduce(in.p, out.p, 1024, DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kNccl);
    msg += timeout_naming([&] { ctx()->synchronize(nullptr, "NCCL all_reduce the last rank skipped"); }, {"NCCL all_reduce"});
    if (seconds_since(t0) >= 10.0) msg += "the watchdog took " + std::to_string(seconds_since(t0)) + " s; ";
    if (c->failure().empty()) msg += "failure() is empty; ";
  }
  c->abort();
  c.reset();
  ctx()->reset_error();
  heap().team().barrier("after the NCCL watchdog");
  ASSERT_ALL(msg.empty(), msg);
}

// The last rank dies; each other rank's barrier names it, and the next host exchange learns at
// once that it is gone. Must stay the last test: after it no exchange completes. Each survivor
// asserts for itself (no exchange is left to agree through), and every survivor does. Where the
// filter selects a test after it (gtest runs the suites in the order they were linked, so a
// filter "Fault.*:Random.*" puts the Random suite after this one), it skips rather than fail
// every test that follows (session 101's first call found two such runs).
TEST(Fault, PeerKilledWhileWaitedOn) {
  const int n = heap().team().size(), me = heap().team().rank(), dead = n - 1;
  if (n < 2) GTEST_SKIP() << "needs 2 or more ranks (one dies while the others wait on it)";
  const std::string next = next_selected_test();
  if (!next.empty())
    GTEST_SKIP() << "kills a rank, so it runs only as the last test selected, and the filter selects " << next
                 << " after it: run Fault.* in a run of its own (as the multigpu_fault_* tiers do)";
  ctx()->set_device_timeout_ms(2000);
  SymmetricBuffer b = heap().alloc(64);
  if (me == dead) {
    std::fflush(stdout);
    _exit(0);  // dies without reaching the barrier
  }
  auto t0 = std::chrono::steady_clock::now();
  stream::barrier(b, nullptr);
  try {
    ctx()->synchronize(nullptr, "barrier with a dead peer");
    FAIL() << "expected Timeout";
  } catch (const Timeout& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("rank " + std::to_string(ctx()->rank()) + " (team rank " + std::to_string(me)), std::string::npos) << m;
    EXPECT_NE(m.find("a barrier arrival from team rank " + std::to_string(dead)), std::string::npos) << m;
  }
  EXPECT_LT(seconds_since(t0), 10.0);
  ctx()->reset_error();
  // Host-side collectives learn at once that the last rank is gone.
  try {
    heap().team().barrier("after the peer died");
    FAIL() << "expected PeerLost";
  } catch (const PeerLost& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(dead) + " exited"), std::string::npos) << e.what();
  }
}
