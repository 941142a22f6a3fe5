#pragma once
// Runs a function as N forked processes (ranks) and collects each one's exit code and message.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "symmem/env.hpp"

namespace symmem::test {

struct RankResult {
  int code = -1;
  std::string message;
};

/// A TCP port that was free a moment ago.
inline int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  socklen_t len = sizeof(sa);
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  close(fd);
  return ntohs(sa.sin_port);
}

inline BootstrapConfig config(int rank, int world, int port, int timeout_ms = 5000) {
  BootstrapConfig c;
  c.rank = rank;
  c.world_size = world;
  c.local_rank = rank;
  c.local_world_size = world;
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.timeout_ms = timeout_ms;
  return c;
}

/// fn(rank) returns the message to report; it may throw (code 1, the what() reported) or _exit.
inline std::vector<RankResult> run_ranks(int n, const std::function<std::string(int)>& fn) {
  std::vector<int> pipes(n);
  std::vector<pid_t> pids(n);
  for (int r = 0; r < n; ++r) {
    int p[2];
    if (pipe(p) != 0) return {};
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      int code = 0;
      std::string msg;
      try {
        msg = fn(r);
      } catch (const std::exception& e) {
        msg = e.what();
        code = 1;
      }
      (void)!write(p[1], msg.data(), msg.size());
      close(p[1]);
      _exit(code);
    }
    close(p[1]);
    pipes[r] = p[0];
    pids[r] = pid;
  }
  std::vector<RankResult> out(n);
  for (int r = 0; r < n; ++r) {
    char buf[4096];
    ssize_t k;
    while ((k = read(pipes[r], buf, sizeof(buf))) > 0) out[r].message.append(buf, static_cast<size_t>(k));
    close(pipes[r]);
    int st = 0;
    waitpid(pids[r], &st, 0);
    out[r].code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  return out;
}

}  // namespace symmem::test
