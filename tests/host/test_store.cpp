// The rendezvous store against what a hostile or broken network peer can send: malformed frames,
// huge length prefixes, a client that never reads, stray hellos, two processes with one RANK.
// Every trial runs real processes on 127.0.0.1; the job either completes or fails with a clear
// error naming the cause, and rank 0's memory stays bounded.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "fork_ranks.hpp"
#include "symmem/bootstrap.hpp"
#include "symmem/error.hpp"

using namespace symmem;
using symmem::test::config;
using symmem::test::free_port;
using symmem::test::run_ranks;

namespace {

/// A raw TCP connection to the store, retried until it is up.
int raw_connect(int port) {
  for (int i = 0; i < 200; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) return fd;
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}
void send_bytes(int fd, const std::string& b) { (void)!send(fd, b.data(), b.size(), MSG_NOSIGNAL); }
std::string u32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string frame(const std::string& payload) { return u32(static_cast<uint32_t>(payload.size())) + payload; }
std::string str(const std::string& s) { return u32(static_cast<uint32_t>(s.size())) + s; }
/// The token a job without SYMMEM_JOB_TOKEN derives.
std::string derived_token(int port, int world) { return "derived=127.0.0.1:" + std::to_string(port) + ":" + std::to_string(world); }

long rss_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

/// Ranks 0 and 1 of a 2-rank job gather `rounds` times while `attack` runs against the store.
std::vector<symmem::test::RankResult> job_under_attack(int port, const std::function<void()>& attack, int rounds = 20) {
  return run_ranks(3, [&](int r) -> std::string {
    if (r == 2) {
      attack();
      return "attacker done";
    }
    Bootstrap b(config(r, 2, port, 8000));
    const long before = rss_kb();
    for (int i = 0; i < rounds; ++i) {
      auto v = b.all_gather("round" + std::to_string(i), {0, 1}, std::to_string(r * 100 + i), "test exchange");
      if (v[0] != std::to_string(i) || v[1] != std::to_string(100 + i)) return "wrong data in round " + std::to_string(i);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "ok rss_growth_kb=" + std::to_string(rss_kb() - before);
  });
}

void expect_ok(const std::vector<symmem::test::RankResult>& res) {
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(res[r].code, 0) << "rank " << r << ": " << res[r].message;
    EXPECT_EQ(res[r].message.rfind("ok", 0), 0u) << "rank " << r << ": " << res[r].message;
  }
}
long growth_kb(const symmem::test::RankResult& r) {
  auto pos = r.message.find("rss_growth_kb=");
  return pos == std::string::npos ? -1 : std::stol(r.message.substr(pos + 14));
}

}  // namespace

TEST(Store, SurvivesEmptyAndTinyFrames) {
  const int port = free_port();
  auto res = job_under_attack(port, [&] {
    for (const std::string& bad : {u32(0), frame("X"), frame(std::string(1, 'H')), frame("G" + u32(5)), std::string("\x01\x00", 2)}) {
      int fd = raw_connect(port);
      send_bytes(fd, bad);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      close(fd);
    }
  });
  expect_ok(res);
}

TEST(Store, HugeLengthPrefixIsRefusedWithoutBuffering) {
  const int port = free_port();
  auto res = job_under_attack(port, [&] {
    int fd = raw_connect(port);
    send_bytes(fd, u32(0xFFFFFFF0u));
    const std::string junk(1 << 20, 'z');
    for (int i = 0; i < 512; ++i) send_bytes(fd, junk);  // 512 MiB offered; the server closes first
    close(fd);
  });
  expect_ok(res);
  EXPECT_LT(growth_kb(res[0]), 64 * 1024) << res[0].message;
}

TEST(Store, SlowReaderDoesNotBlockTheServer) {
  const int port = free_port();
  std::vector<symmem::test::RankResult> res = run_ranks(3, [&](int r) -> std::string {
    if (r == 2) {
      // A rank-2 connection of a 3-rank job that asks again and again and never reads.
      int fd = raw_connect(port);
      send_bytes(fd, frame("H" + u32(2) + str(derived_token(port, 3))));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      send_bytes(fd, frame("S" + str("big") + str(std::string(1 << 20, 'b'))));
      const std::string ask = frame("G" + u32(1000) + u32(0) + u32(1) + str("big"));
      for (int i = 0; i < 24; ++i) send_bytes(fd, ask);  // 24 MiB of replies it never reads (under the cap)
      std::this_thread::sleep_for(std::chrono::milliseconds(4000));
      close(fd);
      return "ok";
    }
    Bootstrap b(config(r, 3, port, 8000));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto t = std::chrono::steady_clock::now();
    const long before = rss_kb();
    for (int i = 0; i < 50; ++i) b.all_gather("g" + std::to_string(i), {0, 1}, "x", "test exchange");
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    if (secs > 2.0) return "50 exchanges took " + std::to_string(secs) + " s";
    return "ok rss_growth_kb=" + std::to_string(rss_kb() - before);
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(res[r].message.rfind("ok", 0), 0u) << "rank " << r << ": " << res[r].message;
  EXPECT_LT(growth_kb(res[0]), 64 * 1024) << res[0].message;
}

TEST(Store, StrayHellosAreRefusedAndHarmless) {
  const int port = free_port();
  auto res = job_under_attack(port, [&] {
    // Another job's token, claiming rank 1, then gone.
    int fd = raw_connect(port);
    send_bytes(fd, frame("H" + u32(1) + str("another-job")));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    close(fd);
    // Out of range.
    fd = raw_connect(port);
    send_bytes(fd, frame("H" + u32(7) + str(derived_token(port, 2))));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    close(fd);
  });
  expect_ok(res);
}

TEST(Store, TwoProcessesWithOneRankFailTheJob) {
  const int port = free_port();
  // Rank 0 exchanges only once both processes that say RANK=1 have had their hello answered (each
  // writes a byte into `answered` then), so the refused hello, which fails the job, always comes
  // before the exchange. (A sleep stood here: on a loaded machine the second hello sometimes came
  // after a finished exchange, and only the refused process failed.)
  int answered[2];
  ASSERT_EQ(pipe(answered), 0);
  auto res = run_ranks(3, [&](int r) -> std::string {
    if (r == 0) {
      close(answered[1]);
      Bootstrap b(config(0, 2, port, 5000));
      char c[2];
      size_t got = 0;
      pollfd pf{answered[0], POLLIN, 0};
      while (got < 2 && poll(&pf, 1, 20000) > 0) {  // (each byte within 20 s)
        const ssize_t k = read(answered[0], c, 2 - got);
        if (k <= 0) break;
        got += static_cast<size_t>(k);
      }
      if (got < 2) return "the two hellos were not both answered within 20 s each";
      b.all_gather("x", {0, 1}, "v0", "the exchange");
      return "no error";
    }
    close(answered[0]);
    const auto tell = [&] {
      const char one = 1;
      (void)!write(answered[1], &one, 1);
    };
    std::unique_ptr<Bootstrap> b;
    try {
      b = std::make_unique<Bootstrap>(config(1, 2, port, 5000));  // ranks 1 and 2 both say RANK=1
    } catch (...) {
      tell();
      throw;
    }
    tell();
    b->all_gather("x", {0, 1}, "v" + std::to_string(r), "the exchange");
    return "no error";
  });
  close(answered[0]);
  close(answered[1]);
  // Every process fails: the refused one at its hello, the other two in the exchange, even where
  // both their keys were in the store before either asked for them (the store once answered that
  // exchange, and only the refused process failed).
  int refused = 0, failed = 0, told = 0;
  for (auto& x : res) {
    refused += x.message.find("already connected: two processes were started with RANK=1") != std::string::npos;
    failed += x.code != 0;
    told += x.message.find("the job cannot go on") != std::string::npos;
  }
  EXPECT_GE(refused, 1) << res[0].message << " | " << res[1].message << " | " << res[2].message;
  EXPECT_EQ(failed, 3) << res[0].message << " | " << res[1].message << " | " << res[2].message;
  EXPECT_GE(told, 2) << res[0].message << " | " << res[1].message << " | " << res[2].message;
}

TEST(Store, UnresolvableMasterAddrIsAnError) {
  BootstrapConfig c = config(0, 2, free_port(), 500);
  c.master_addr = "no-such-host.invalid";
  try {
    Bootstrap b(c);
    FAIL() << "expected an error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_ADDR 'no-such-host.invalid' does not resolve"), std::string::npos) << e.what();
  }
}

TEST(Store, GatheredKeysAreForgotten) {
  const int port = free_port();
  auto res = run_ranks(2, [&](int r) -> std::string {
    Bootstrap b(config(r, 2, port, 5000));
    b.all_gather("once", {0, 1}, "v", "test");
    b.all_gather("sync", {0, 1}, "", "test");
    try {
      b.get("once/1", "reading a gathered key again", 200);
      return std::string("the key is still there");
    } catch (const Timeout&) {
      return std::string("ok");
    }
  });
  for (auto& x : res) EXPECT_EQ(x.message, "ok");
}
