#include "socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "symmem/error.hpp"

namespace symmem::detail {

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

static sockaddr_in resolve(const std::string& addr, int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  if (addr.empty()) {
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
  } else if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    int rc = getaddrinfo(addr.c_str(), nullptr, &hints, &res);
    if (rc != 0 || res == nullptr)
      fail("MASTER_ADDR '" + addr + "' does not resolve (" + gai_strerror(rc) + "): give an IPv4 address or host name");
    sa.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
    freeaddrinfo(res);
  }
  return sa;
}

int tcp_listen(const std::string& addr, int port, int backlog) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw_system("socket()", errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in sa = resolve(addr, port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    int e = errno;
    close(fd);
    throw_system("rank 0 could not bind the rendezvous store to " + (addr.empty() ? "*" : addr) + ":" +
                     std::to_string(port) + " (is MASTER_PORT in use by another job?)", e);
  }
  if (listen(fd, backlog) != 0) {
    int e = errno;
    close(fd);
    throw_system("listen()", e);
  }
  return fd;
}

int bound_port(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return ntohs(sa.sin_port);
}

int tcp_connect(const std::string& addr, int port, Clock::time_point deadline, const std::string& what) {
  sockaddr_in sa = resolve(addr, port);
  int last = 0;
  do {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw_system("socket()", errno);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;
    }
    last = errno;
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (Clock::now() < deadline);
  fail<Timeout>("timed out connecting to " + what + " at " + addr + ":" + std::to_string(port) + " (" +
                std::strerror(last) + "): is rank 0 running, and are MASTER_ADDR/MASTER_PORT the same on every rank?");
}

bool send_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

int recv_all(int fd, void* data, size_t n, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int rc = poll(&pfd, 1, ms_left(deadline));
    if (rc < 0) {
      if (errno == EINTR) continue;
      throw_system("poll()", errno);
    }
    if (rc == 0) return -1;
    ssize_t k = recv(fd, p, n, 0);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return 0;
    }
    if (k == 0) return 0;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return 1;
}

bool send_frame(int fd, const std::string& payload) {
  uint32_t len = static_cast<uint32_t>(payload.size());
  return send_all(fd, &len, 4) && send_all(fd, payload.data(), payload.size());
}

int recv_frame(int fd, std::string* payload, Clock::time_point deadline) {
  uint32_t len = 0;
  int rc = recv_all(fd, &len, 4, deadline);
  if (rc != 1) return rc;
  payload->resize(len);
  return len == 0 ? 1 : recv_all(fd, payload->data(), len, deadline);
}

void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_str(std::string& s, const std::string& v) {
  put_u32(s, static_cast<uint32_t>(v.size()));
  s += v;
}
uint32_t Reader::u32() {
  if (pos + 4 > s.size()) fail<SystemError>("malformed store message");
  uint32_t v;
  std::memcpy(&v, s.data() + pos, 4);
  pos += 4;
  return v;
}
uint8_t Reader::u8() {
  if (pos + 1 > s.size()) fail<SystemError>("malformed store message");
  return static_cast<uint8_t>(s[pos++]);
}
std::string Reader::str() {
  uint32_t n = u32();
  if (pos + n > s.size()) fail<SystemError>("malformed store message");
  std::string v = s.substr(pos, n);
  pos += n;
  return v;
}

}  // namespace symmem::detail
