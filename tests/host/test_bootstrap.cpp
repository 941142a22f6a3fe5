#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "fork_ranks.hpp"
#include "memory_store.hpp"
#include "symmem/bootstrap.hpp"
#include "symmem/error.hpp"

using namespace symmem;
using symmem::test::config;
using symmem::test::free_port;
using symmem::test::run_ranks;

TEST(Bootstrap, SingleRankNeedsNoPort) {
  BootstrapConfig c;  // rank 0 of 1, port 0: picks a free one
  Bootstrap b(c);
  EXPECT_GT(b.port(), 0);
  auto v = b.all_gather("k", {0}, "mine", "test");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], "mine");
}

TEST(Bootstrap, AllGatherAcrossFourProcesses) {
  int port = free_port();
  auto res = run_ranks(4, [&](int r) {
    Bootstrap b(config(r, 4, port));
    std::string out;
    for (int round = 0; round < 3; ++round) {
      auto v = b.all_gather("ag" + std::to_string(round), {0, 1, 2, 3}, "r" + std::to_string(r * 10 + round), "test");
      for (int i = 0; i < 4; ++i)
        if (v[i] != "r" + std::to_string(i * 10 + round)) return std::string("bad value from rank ") + std::to_string(i);
    }
    // A subset gathers among itself.
    if (r % 2 == 0) {
      auto v = b.all_gather("even", {0, 2}, std::string(1000, static_cast<char>('a' + r)), "test");
      if (v[1] != std::string(1000, 'c')) return std::string("bad subset value");
    }
    b.set("key" + std::to_string(r), "value" + std::to_string(r));
    if (b.get("key" + std::to_string((r + 1) % 4), "test") != "value" + std::to_string((r + 1) % 4))
      return std::string("bad get");
    return std::string("ok");
  });
  ASSERT_EQ(res.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(res[r].code, 0) << "rank " << r << ": " << res[r].message;
    EXPECT_EQ(res[r].message, "ok");
  }
}

TEST(Bootstrap, BesideTorchrunsAgentOnMasterPort) {
  // torchrun's agent listens on MASTER_PORT (here a socket of ours): the ranks, told so by
  // TORCHELASTIC_USE_AGENT_STORE, meet on the port they derive from the run id and MASTER_PORT.
  // (Without the flag rank 0 cannot bind MASTER_PORT: "Address already in use".)
  int agent = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(agent, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(listen(agent, 4), 0);
  socklen_t len = sizeof(sa);
  getsockname(agent, reinterpret_cast<sockaddr*>(&sa), &len);
  const std::string port = std::to_string(ntohs(sa.sin_port)), run = "test-" + std::to_string(getpid());
  auto res = run_ranks(3, [&](int r) {
    std::map<std::string, std::string> vars = {{"RANK", std::to_string(r)}, {"WORLD_SIZE", "3"}, {"LOCAL_RANK", std::to_string(r)},
        {"LOCAL_WORLD_SIZE", "3"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}, {"TORCHELASTIC_RUN_ID", run},
        {"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"SYMMEM_BOOTSTRAP_TIMEOUT_MS", "10000"}};
    BootstrapConfig c = bootstrap_config_from_env([&](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
    Bootstrap b(c);
    auto v = b.all_gather("k", {0, 1, 2}, "r" + std::to_string(r), "test");
    return v[0] == "r0" && v[2] == "r2" && std::to_string(c.agent_port) == port ? std::string("ok") : std::string("bad gather");
  });
  close(agent);
  ASSERT_EQ(res.size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(res[r].message, "ok") << "rank " << r;
}

TEST(Bootstrap, MissingRankIsNamedWithinTimeout) {
  int port = free_port();
  auto t0 = std::chrono::steady_clock::now();
  // World of 3, but rank 2 never starts.
  auto res = run_ranks(2, [&](int r) {
    Bootstrap b(config(r, 3, port, 1500));
    b.all_gather("x", {0, 1, 2}, "", "the test exchange");
    return std::string("no error");
  });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(res[r].code, 1) << res[r].message;
    EXPECT_NE(res[r].message.find("rank 2 never arrived"), std::string::npos) << res[r].message;
    EXPECT_NE(res[r].message.find("the test exchange"), std::string::npos) << res[r].message;
    EXPECT_NE(res[r].message.find("timed out after 15"), std::string::npos) << "the true elapsed time: " << res[r].message;
  }
  // Named at the bound, and the processes leave without waiting out a second one.
  EXPECT_LT(secs, 1.5 + 1.5);
}

TEST(Bootstrap, RankKilledDuringBootstrapFailsTheOthersFast) {
  int port = free_port();
  auto t0 = std::chrono::steady_clock::now();
  auto res = run_ranks(3, [&](int r) {
    Bootstrap b(config(r, 3, port, 20000));
    b.all_gather("first", {0, 1, 2}, "", "first exchange");
    if (r == 2) _exit(9);  // dies without saying goodbye
    b.all_gather("second", {0, 1, 2}, "", "second exchange");
    return std::string("no error");
  });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(res[2].code, 9);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(res[r].code, 1) << res[r].message;
    EXPECT_NE(res[r].message.find("rank 2 exited"), std::string::npos) << res[r].message;
    EXPECT_NE(res[r].message.find("second exchange"), std::string::npos) << res[r].message;
  }
  EXPECT_LT(secs, 10.0) << "the others should fail on the lost connection, long before the 20 s timeout";
}

TEST(Bootstrap, RankZeroUnreachableTimesOut) {
  int port = free_port();  // nobody listens
  BootstrapConfig c = config(1, 2, port, 300);
  try {
    Bootstrap b(c);
    FAIL() << "expected Timeout";
  } catch (const Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("rendezvous store of rank 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
}

TEST(Bootstrap, RejectsBadConfig) {
  BootstrapConfig c;
  c.world_size = 2;
  c.rank = 2;
  c.master_port = 1234;
  EXPECT_THROW(Bootstrap b(c), InvalidArgument);
  c.rank = 1;
  c.master_port = 0;
  try {
    Bootstrap b(c);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_PORT"), std::string::npos);
  }
}

// Joining through a store the job already has (what symmem.init does with torch.distributed's):
// memory_store.hpp's MemoryStore, ranks as threads.
using symmem::test::MemoryStore;
using symmem::test::on_threads;

TEST(Bootstrap, ThroughAnExternalStore) {
  auto store = std::make_shared<MemoryStore>();
  const int n = 3;
  std::vector<std::vector<std::string>> got(n);
  const auto errors = on_threads(store, n, "job1/", [&](const std::shared_ptr<symmem::Bootstrap>& b, int r) {
    got[r] = b->all_gather("k", {0, 1, 2}, "v" + std::to_string(r), "test");
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(got[r], (std::vector<std::string>{"v0", "v1", "v2"})) << errors[r];
}

// A team's keys in an external store do not pile up: each rank removes its key of a team's exchange
// once the team's next exchange has completed (every member has read it by then), so what is left
// is each team's last exchange. Here two teams (the world of 3, and ranks 0 and 2) exchange in turn,
// the values checked at every step, plus a key of no team, which stays.
TEST(Bootstrap, ExternalStoreKeepsOnlyEachTeamsLastExchange) {
  auto store = std::make_shared<MemoryStore>();
  const int n = 3, steps = 40;
  std::vector<std::string> bad(n);
  const auto errors = on_threads(store, n, "job3/", [&](const std::shared_ptr<symmem::Bootstrap>& b, int r) {
    if (b->all_gather("plain", {0, 1, 2}, "p" + std::to_string(r), "a key of no team") != std::vector<std::string>{"p0", "p1", "p2"})
      bad[r] = "plain";
    for (int i = 0; i < steps && bad[r].empty(); ++i) {
      const std::string v = std::to_string(i) + "." + std::to_string(r);
      auto all = b->all_gather("world#" + std::to_string(i), {0, 1, 2}, v, "world");
      for (int q = 0; q < n; ++q)
        if (all[q] != std::to_string(i) + "." + std::to_string(q)) bad[r] = "world#" + std::to_string(i) + ": " + all[q];
      if (r != 1) {
        all = b->all_gather("world#0.c0#" + std::to_string(i), {0, 2}, v, "a team of 0 and 2");
        if (all != std::vector<std::string>{std::to_string(i) + ".0", std::to_string(i) + ".2"}) bad[r] = "c0#" + std::to_string(i);
      }
    }
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(bad[r] + errors[r], "") << "rank " << r;
  const auto last = std::to_string(steps - 1);
  std::vector<std::string> want = {"job3/plain/0", "job3/plain/1", "job3/plain/2", "job3/world#" + last + "/0", "job3/world#" + last + "/1",
                                   "job3/world#" + last + "/2", "job3/world#0.c0#" + last + "/0", "job3/world#0.c0#" + last + "/2"};
  std::sort(want.begin(), want.end());  // (the store lists its keys in order)
  EXPECT_EQ(store->keys(), want);
  EXPECT_FALSE(store->removed_unknown());
}

TEST(Bootstrap, ExternalStoreNamesTheMissingRank) {
  auto store = std::make_shared<MemoryStore>();
  symmem::BootstrapConfig c;
  c.rank = 0;
  c.world_size = 3;
  c.timeout_ms = 300;
  symmem::Bootstrap b(c, store, "job2/");
  store->set("job2/k/2", "here");
  try {
    b.all_gather("k", {0, 1, 2}, "v0", "the test exchange");
    FAIL() << "expected Timeout";
  } catch (const symmem::Timeout& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("rank 1 never arrived"), std::string::npos) << m;
    EXPECT_NE(m.find("the test exchange"), std::string::npos) << m;
  }
}
