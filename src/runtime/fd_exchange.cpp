#include "fd_exchange.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
  timeval tv{5, 0};
  setsockopt(sock_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

FdExchange::~FdExchange() {
  for (auto& kv : early_) close(kv.second);
  if (sock_ >= 0) close(sock_);
}

std::string FdExchange::address(int rank) const { return prefix_ + "." + std::to_string(rank); }

std::vector<int> FdExchange::exchange(int fd, uint64_t seq, int timeout_ms) {
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_) continue;
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
    if (sendmsg(sock_, &h, 0) < 0)
      throw_system("passing a memory handle to team rank " + std::to_string(p) +
                       " over its Unix socket (is it on this host, and still alive?)", errno);
  }
  std::vector<int> out(nranks_, -1);
  int missing = nranks_ - 1;
  for (auto it = early_.begin(); it != early_.end();) {
    if (it->first.first == seq) {
      out[it->first.second] = it->second;
      --missing;
      it = early_.erase(it);
    } else {
      ++it;
    }
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (missing > 0) {
    pollfd pfd{sock_, POLLIN, 0};
    int rc = poll(&pfd, 1, ms_left(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) {
      std::string who;
      for (int p = 0; p < nranks_; ++p)
        if (p != rank_ && out[p] < 0) who += (who.empty() ? "" : ", ") + std::to_string(p);
      for (int f : out)
        if (f >= 0) close(f);
      fail<Timeout>("timed out after " + std::to_string(timeout_ms) + " ms waiting for the memory handles of team ranks " + who);
    }
    Msg m{};
    iovec iov{&m, sizeof(m)};
    alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    h.msg_control = ctrl;
    h.msg_controllen = sizeof(ctrl);
    ssize_t k = recvmsg(sock_, &h, MSG_CMSG_CLOEXEC);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw_system("recvmsg on the fd-exchange socket", errno);
    }
    cmsghdr* c = CMSG_FIRSTHDR(&h);
    if (k != sizeof(m) || c == nullptr || c->cmsg_type != SCM_RIGHTS) continue;
    int got;
    std::memcpy(&got, CMSG_DATA(c), sizeof(int));
    if (m.sender < 0 || m.sender >= nranks_ || m.sender == rank_) {
      close(got);
      continue;
    }
    if (m.seq != seq) {
      early_[{m.seq, m.sender}] = got;
      continue;
    }
    if (out[m.sender] >= 0) close(out[m.sender]); else --missing;
    out[m.sender] = got;
  }
  return out;
}

}  // namespace symmem::detail
