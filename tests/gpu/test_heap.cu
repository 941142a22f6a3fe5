#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "gpu_env.hpp"

using namespace symmem;
using namespace symmem::test;

TEST(Heap, EveryRankMapsEveryPeer) {
  const int n = heap().team().size(), me = heap().team().rank();
  for (size_t bytes : {size_t(1), size_t(4097), size_t(3) << 20}) {
    SymmetricBuffer b = heap().alloc(bytes);
    std::ostringstream msg;
    if (b.bytes() != bytes || b.nranks() != n || b.rank() != me)
      msg << "bytes " << b.bytes() << ", nranks " << b.nranks() << ", rank " << b.rank() << "; ";
    if (!b.contains(b.ptr(), bytes) || b.contains(b.ptr(), bytes + 1)) msg << "contains() is wrong at the end; ";
    if (!heap().find(static_cast<char*>(b.ptr()) + bytes - 1).valid()) msg << "find() misses the last byte; ";
    // Each rank writes its own random data; after a barrier every rank reads every peer's.
    upload(b.ptr(), random_bytes(bytes, 100 + me));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    stream::barrier(b, nullptr);
    ctx()->synchronize(nullptr, "barrier");
    for (int p = 0; p < n; ++p) {
      if (b.peer_ptr(p) == nullptr) {
        msg << "peer " << p << " unmapped; ";
        continue;
      }
      if (first_diff(download(b.peer_ptr(p), bytes), random_bytes(bytes, 100 + p)) != -1) msg << "peer " << p << "'s bytes differ; ";
      // Signal pads start zeroed.
      if (first_diff(download(b.peer_signal_pad(p), 4096), std::vector<uint8_t>(4096, 0)) != -1) msg << "peer " << p << "'s pad is not zero; ";
    }
    stream::barrier(b, nullptr);
    ctx()->synchronize(nullptr);
    heap().free(b);
    if (b.valid()) msg << "valid after free; ";
    ASSERT_ALL(msg.str().empty(), bytes << " bytes: " << msg.str());
  }
}

TEST(Heap, ManyAllocationsAndFrees) {
  std::vector<SymmetricBuffer> v;
  for (int i = 0; i < 24; ++i) v.push_back(heap().alloc(size_t(64) << (i % 12)));
  for (auto& b : v) heap().free(b);
  SymmetricBuffer again = heap().alloc(1 << 20);
  const bool valid = again.valid();
  heap().free(again);
  ASSERT_ALL(valid, "an allocation after 24 frees is not valid");
}

TEST(Heap, SizeMismatchRaisesOnEveryRank) {
  if (heap().team().size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::string m = attempt([&] { heap().alloc(heap().team().rank() == 0 ? 1024 : 2048); });
  ASSERT_ALL(m.find("sizes differ across ranks") != std::string::npos && m.find("rank 0 asked 1024") != std::string::npos,
             "got '" << m << "'");
}

// A zero size on one rank: every rank raises at once, naming it (it used to raise on that rank
// alone and leave the others waiting for its call until the bound).
TEST(Heap, ZeroBytesOnOneRankRaisesOnEveryRank) {
  if (heap().team().size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const auto t0 = std::chrono::steady_clock::now();
  std::string m = "nothing raised";
  try {
    heap().alloc(heap().team().rank() == 0 ? 0 : 2048);
  } catch (const InvalidArgument& e) {
    m = e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SymmetricBuffer b = heap().alloc(4096);  // the heap still works
  heap().free(b);
  ASSERT_ALL(m.find("rank 0 asked 0") != std::string::npos && s < 10.0, "got '" << m << "' after " << s << " s");
}

TEST(Heap, OutOfMemoryRaisesOnEveryRank) {
  std::string m = "nothing raised";
  try {
    heap().alloc(size_t(1) << 46);  // 64 TiB
  } catch (const CudaError& e) {
    m = e.what();
  } catch (const std::exception& e) {
    m = std::string("another error: ") + e.what();
  }
  SymmetricBuffer b = heap().alloc(4096);  // the heap still works
  heap().free(b);
  ASSERT_ALL(m.find("out of device memory") != std::string::npos, "got '" << m << "'");
}

TEST(Heap, BadArguments) {
  std::string msg;
  msg += refusal("alloc(0)", [&] { heap().alloc(0); });
  msg += refusal("alloc(1 PiB + 1)", [&] { heap().alloc((size_t(1) << 50) + 1); });
  SymmetricBuffer b = heap().alloc(256);
  msg += refusal("peer_ptr(nranks)", [&] { b.peer_ptr(heap().team().size()); });
  msg += refusal("peer_ptr(-1)", [&] { b.peer_ptr(-1); });
  heap().free(b);
  msg += refusal("a second free", [&] { heap().free(b); });
  SymmetricBuffer empty;
  msg += refusal("an empty buffer's ptr()", [&] { empty.ptr(); });
  ASSERT_ALL(msg.empty(), msg);
}

// Python frees when its garbage collector runs, which differs across ranks: frees in a different
// order on every rank, then allocations that reuse the space, must stay symmetric (every peer
// pointer is that peer's block of the same buffer) and never hand out memory a rank still holds.
TEST(Heap, FreesInAnyOrderStaySymmetricAndReuseSpace) {
  const int n = heap().team().size(), me = heap().team().rank();
  std::mt19937 rng(1234 + me);  // a different order on every rank
  std::string msg;
  const size_t mapped_before = heap().mapped_bytes();
  // (The ranks agree on each round's verdict before the next, whose barriers they all take: agreed_step.)
  auto one_round = [&](int round) -> std::string {
    std::string why;
    std::vector<SymmetricBuffer> v;
    for (int i = 0; i < 12; ++i) v.push_back(heap().alloc(size_t(1000) << (i % 8)));
    // Each buffer: this rank writes its own stamp; after a barrier, every peer's block holds that peer's stamp.
    for (size_t i = 0; i < v.size(); ++i) upload(v[i].ptr(), random_bytes(64, 1000 * round + 10 * i + me));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    stream::barrier(v[0], nullptr);
    ctx()->synchronize(nullptr, "barrier");
    for (size_t i = 0; i < v.size() && why.empty(); ++i)
      for (int p = 0; p < n; ++p)
        if (first_diff(download(v[i].peer_ptr(p), 64), random_bytes(64, 1000 * round + 10 * i + p)) != -1)
          why = "round " + std::to_string(round) + " buffer " + std::to_string(i) + ": peer " + std::to_string(p) + "'s block is not its copy";
    stream::barrier(v[0], nullptr);
    ctx()->synchronize(nullptr, "barrier");
    std::shuffle(v.begin(), v.end(), rng);
    for (size_t i = 0; i < v.size(); ++i) {
      if (i % 2) heap().free(v[i]);
      else heap().free_async(v[i], nullptr);
    }
    return why;
  };
  for (int round = 0; round < 6 && msg.empty(); ++round) msg = agreed_step([&] { return one_round(round); });
  if (msg.empty() && heap().mapped_bytes() > mapped_before + (size_t(256) << 20))
    msg = "the heap grew by " + std::to_string(heap().mapped_bytes() - mapped_before) + " bytes: freed space is not reused";
  ASSERT_ALL(msg.empty(), msg);
}

TEST(Heap, ABufferLargerThanAnArenaIsUnmappedOnceEveryRankFreedIt) {
  const size_t before = heap().mapped_bytes();
  SymmetricBuffer big = heap().alloc(size_t(600) << 20);
  const size_t with = heap().mapped_bytes();
  heap().free(big);
  SymmetricBuffer small = heap().alloc(4096);  // member 0 sees every release here and drops the arena
  const size_t after = heap().mapped_bytes();
  heap().free(small);
  std::string msg;
  if (with < before + (size_t(600) << 20)) msg = "the big buffer did not get its own arena";
  else if (after > before + (size_t(256) << 20)) msg = "the big buffer's arena is still mapped: " + std::to_string(after) + " bytes";
  ASSERT_ALL(msg.empty(), msg);
}

// A second job of the same ranks (a store on a port rank 0 picked) whose contexts are made with
// SYMMEM_DEBUG_CHECKS on the last rank only: refused on every rank at start-up, naming the setting
// (a checked call exchanges what an unchecked one does not: the first call would hang until the
// bound).
TEST(ContextSetup, DebugChecksUnlikeAcrossRanksAreRefusedOnEveryRank) {
  const int n = ctx()->size(), me = ctx()->rank();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  std::string port;
  if (me == 0) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 && getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = std::to_string(ntohs(a.sin_port));
    if (fd >= 0) close(fd);
  }
  port = ctx()->world().all_gather(port, "the second job's port")[0];
  ASSERT_ALL(!port.empty(), "no free port on rank 0");
  BootstrapConfig cfg = bootstrap_config_from_env();
  cfg.master_addr = "127.0.0.1";
  cfg.master_port = std::stoi(port);
  cfg.timeout_ms = 20000;
  Settings settings = ctx()->settings();
  settings.debug_checks = me == n - 1;
  const std::string why = attempt([&] { Context c(std::make_shared<Bootstrap>(cfg), settings); });
  ASSERT_ALL(why.find("symmem::Context: arguments differ across ranks (SYMMEM_DEBUG_CHECKS)") != std::string::npos, "got '" << why << "'");
}
