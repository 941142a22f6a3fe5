// Faults: waits that can never be met end in symmem::Timeout naming rank, peer and slot, within the
// configured bound. Run with 2 ranks (the last test ends rank 1's process).
#include <unistd.h>

#include <chrono>

#include "gpu_env.hpp"

using namespace symmem;
using namespace symmem::test;

TEST(Fault, UnmetSignalWaitTimesOutWithFacts) {
  ctx()->set_device_timeout_ms(1500);
  SymmetricBuffer b = heap().alloc(64);  // handles made now carry the 1.5 s bound
  auto t0 = std::chrono::steady_clock::now();
  stream::wait(b, 9, Cmp::kGe, 1, nullptr);  // nobody signals slot 9
  try {
    ctx()->synchronize(nullptr, "waiting on slot 9");
    FAIL() << "expected Timeout";
  } catch (const Timeout& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("waiting on slot 9: device wait timed out: rank " + std::to_string(ctx()->rank())), std::string::npos) << m;
    EXPECT_NE(m.find("signal slot 9 >= 1, last value seen 0"), std::string::npos) << m;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 8.0);
  ctx()->reset_error();
  heap().team().barrier("after unmet wait");
  heap().free(b);
}

TEST(Fault, PeerKilledWhileWaitedOn) {
  if (heap().team().size() != 2) GTEST_SKIP() << "runs with exactly 2 ranks";
  ctx()->set_device_timeout_ms(2000);
  SymmetricBuffer b = heap().alloc(64);
  if (heap().team().rank() == 1) {
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
    EXPECT_NE(m.find("rank 0 (team rank 0"), std::string::npos) << m;
    EXPECT_NE(m.find("a barrier arrival from team rank 1"), std::string::npos) << m;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 10.0);
  ctx()->reset_error();
  // Host-side collectives learn at once that rank 1 is gone.
  try {
    heap().team().barrier("after the peer died");
    FAIL() << "expected PeerLost";
  } catch (const PeerLost& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 exited"), std::string::npos) << e.what();
  }
}
