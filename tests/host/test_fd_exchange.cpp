// The fd exchange that maps symmetric memory: real fds (memfds) between real processes, at team
// sizes past the datagram queue (10 messages in a fresh network namespace), with no fd leaked.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../../src/runtime/fd_exchange.hpp"
#include "symmem/error.hpp"
#include "fork_ranks.hpp"

using symmem::detail::FdExchange;
using symmem::test::run_ranks;

namespace {
int open_fds() {
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) (void)e, ++n;
  return n;
}
std::string exchange_ranks(int n, int rounds) {
  const std::string prefix = "symmem-test-fdx-" + std::to_string(getpid()) + "-" + std::to_string(n);
  auto res = run_ranks(n, [&](int r) -> std::string {
    const int before = open_fds();
    {
      FdExchange ex(prefix, r, n);
      for (int round = 0; round < rounds; ++round) {
        int fd = memfd_create("symmem-test", MFD_CLOEXEC);
        const std::string mine = "rank " + std::to_string(r) + " round " + std::to_string(round);
        if (fd < 0 || write(fd, mine.data(), mine.size()) != static_cast<ssize_t>(mine.size())) return std::string("memfd failed");
        std::vector<int> got = ex.exchange(fd, static_cast<uint64_t>(round), 30000);
        close(fd);
        for (int p = 0; p < n; ++p) {
          if (p == r) {
            if (got[p] != -1) return std::string("own slot is not -1");
            continue;
          }
          char buf[64] = {0};
          ssize_t k = pread(got[p], buf, sizeof(buf) - 1, 0);
          const std::string want = "rank " + std::to_string(p) + " round " + std::to_string(round);
          if (k < 0 || std::string(buf) != want) return "from rank " + std::to_string(p) + " got '" + buf + "'";
          close(got[p]);
        }
      }
    }
    const int after = open_fds();
    return after == before ? std::string("ok") : "fds before " + std::to_string(before) + ", after " + std::to_string(after);
  });
  for (int r = 0; r < n; ++r)
    if (res[r].code != 0 || res[r].message != "ok") return "rank " + std::to_string(r) + ": " + res[r].message;
  return "ok";
}
}  // namespace

TEST(FdExchange, TwoRanks) { EXPECT_EQ(exchange_ranks(2, 3), "ok"); }

TEST(FdExchange, SixtyFourRanksPastTheDatagramQueue) { EXPECT_EQ(exchange_ranks(64, 2), "ok"); }

TEST(FdExchange, AMissingRankIsNamedAndNothingLeaks) {
  const std::string prefix = "symmem-test-fdx-missing-" + std::to_string(getpid());
  auto res = run_ranks(2, [&](int r) -> std::string {
    const int before = open_fds();
    std::string msg;
    {
      FdExchange ex(prefix, r, 3);  // rank 2 never comes
      int fd = memfd_create("symmem-test", MFD_CLOEXEC);
      try {
        ex.exchange(fd, 0, 800);
        msg = "no error";
      } catch (const symmem::Timeout& e) {
        msg = e.what();
      }
      close(fd);
    }
    if (open_fds() != before) return "leaked fds; " + msg;
    return msg;
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(res[r].message.find("nothing came from team ranks 2"), std::string::npos) << res[r].message;
    EXPECT_NE(res[r].message.find("team ranks 2 took nothing"), std::string::npos) << res[r].message;
  }
}
