#include "fd_exchange.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "socket.hpp"
#include "symmem/error.hpp"

namespace symmem::detail {

namespace {
struct Msg {
  uint64_t seq;
  int32_t sender;
};
socklen_t make_addr(const std::string& name, sockaddr_un* sa) {
  std::memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  size_t n = std::min(name.size(), sizeof(sa->sun_path) - 2);
  std::memcpy(sa->sun_path + 1, name.data(), n);  // sun_path[0] = 0: abstract namespace
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}
}  // namespace

FdExchange::FdExchange(const std::string& prefix, int rank, int nranks) : prefix_(prefix), rank_(rank), nranks_(nranks) {
  sock_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock_ < 0) throw_system("socket(AF_UNIX)", errno);
  sockaddr_un sa;
  socklen_t len = make_addr(address(rank), &sa);
  if (bind(sock_, reinterpret_cast<sockaddr*>(&sa), len) != 0) {
    int e = errno;
    close(sock_);
    throw_system("binding the fd-exchange socket '" + address(rank) + "'", e);
  }
}

FdExchange::~FdExchange() {
  for (auto& kv : early_) close(kv.second);
  if (sock_ >= 0) close(sock_);
}

std::string FdExchange::address(int rank) const { return prefix_ + "." + std::to_string(rank); }

// Sends and receives interleaved, without blocking: a datagram queue holds few messages (10 by
// default in a fresh network namespace), so a rank that only sent first would wait on peers that
// are themselves still sending. A peer not bound yet (ECONNREFUSED) is tried again.
std::vector<int> FdExchange::exchange(int fd, uint64_t seq, int timeout_ms) {
  std::vector<int> out(nranks_, -1);
  std::vector<char> sent(nranks_, 0);
  sent[rank_] = 1;
  int to_send = nranks_ - 1, missing = nranks_ - 1;
  auto fail_with = [&](auto&& thrower) {
    for (int& f : out)
      if (f >= 0) close(f), f = -1;
    thrower();
  };
  for (auto it = early_.begin(); it != early_.end();) {
    if (it->first.first == seq) {
      out[it->first.second] = it->second;
      --missing;
      it = early_.erase(it);
    } else {
      ++it;
    }
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  int last_errno = 0;
  while (to_send > 0 || missing > 0) {
    for (int p = 0; p < nranks_ && to_send > 0; ++p) {
      if (sent[p]) continue;
      Msg m{seq, rank_};
      iovec iov{&m, sizeof(m)};
      alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
      sockaddr_un sa;
      msghdr h{};
      h.msg_namelen = make_addr(address(p), &sa);
      h.msg_name = &sa;
      h.msg_iov = &iov;
      h.msg_iovlen = 1;
      h.msg_control = ctrl;
      h.msg_controllen = sizeof(ctrl);
      cmsghdr* c = CMSG_FIRSTHDR(&h);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
      if (sendmsg(sock_, &h, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
        sent[p] = 1;
        --to_send;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNREFUSED || errno == ENOENT || errno == EINTR) {
        last_errno = errno;  // its queue is full, or it has not bound yet: again below
      } else {
        const int e = errno;
        fail_with([&] {
          throw_system("passing a memory handle to team rank " + std::to_string(p) +
                           " over its Unix socket (is it on this host, and still alive?)", e);
        });
      }
    }
    if (Clock::now() >= deadline) {
      std::string unsent, unheard;
      for (int p = 0; p < nranks_; ++p) {
        if (!sent[p]) unsent += (unsent.empty() ? "" : ", ") + std::to_string(p);
        if (p != rank_ && out[p] < 0) unheard += (unheard.empty() ? "" : ", ") + std::to_string(p);
      }
      fail_with([&] {
        fail<Timeout>("timed out after " + std::to_string(timeout_ms) + " ms exchanging memory handles" +
                      (unheard.empty() ? "" : "; nothing came from team ranks " + unheard) +
                      (unsent.empty() ? "" : "; team ranks " + unsent + " took nothing (" + std::strerror(last_errno) + ")"));
      });
    }
    // Receive what is there (briefly waiting when there is nothing else to do).
    pollfd pfd{sock_, POLLIN, 0};
    int rc = poll(&pfd, 1, to_send > 0 ? 1 : std::min(ms_left(deadline), 100));
    if (rc <= 0) continue;
    for (;;) {
      Msg m{};
      iovec iov{&m, sizeof(m)};
      alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
      msghdr h{};
      h.msg_iov = &iov;
      h.msg_iovlen = 1;
      h.msg_control = ctrl;
      h.msg_controllen = sizeof(ctrl);
      ssize_t k = recvmsg(sock_, &h, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
      if (k < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        const int e = errno;
        fail_with([&] { throw_system("recvmsg on the fd-exchange socket", e); });
      }
      cmsghdr* c = CMSG_FIRSTHDR(&h);
      int got = -1;
      if (c != nullptr && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&got, CMSG_DATA(c), sizeof(int));
      if (k != sizeof(m) || got < 0 || m.sender < 0 || m.sender >= nranks_ || m.sender == rank_) {
        if (got >= 0) close(got);  // not ours: never leak what came with it
        continue;
      }
      if (m.seq != seq) {
        auto key = std::make_pair(m.seq, static_cast<int>(m.sender));
        if (early_.count(key)) close(early_[key]);
        early_[key] = got;
        continue;
      }
      if (out[m.sender] >= 0) close(out[m.sender]);
      else --missing;
      out[m.sender] = got;
    }
  }
  return out;
}

}  // namespace symmem::detail
