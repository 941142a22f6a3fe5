#pragma once
// Small POSIX socket helpers with deadlines, shared by the TCP store and the fd exchange.
#include <chrono>
#include <cstdint>
#include <string>

namespace symmem::detail {

using Clock = std::chrono::steady_clock;

/// Milliseconds left until `deadline` (0 when passed).
int ms_left(Clock::time_point deadline);

/// A TCP listener on addr:port (addr "" binds all interfaces). Returns the fd.
int tcp_listen(const std::string& addr, int port, int backlog = 1024);
/// Port a listening socket is bound to.
int bound_port(int fd);
/// Connects, retrying refused connections until the deadline. Throws Timeout with `what`.
int tcp_connect(const std::string& addr, int port, Clock::time_point deadline, const std::string& what);

/// Sends all bytes (blocking). Returns false if the peer closed.
bool send_all(int fd, const void* data, size_t n);
/// Receives exactly n bytes before the deadline. Returns 1 on success, 0 on peer close, -1 on timeout.
int recv_all(int fd, void* data, size_t n, Clock::time_point deadline);

/// Length-prefixed frame on a stream socket.
bool send_frame(int fd, const std::string& payload);
int recv_frame(int fd, std::string* payload, Clock::time_point deadline);

/// Appends/reads little binary fields of a frame.
void put_u32(std::string& s, uint32_t v);
void put_str(std::string& s, const std::string& v);
struct Reader {
  const std::string& s;
  size_t pos = 0;
  uint32_t u32();
  std::string str();
  uint8_t u8();
  bool done() const { return pos >= s.size(); }
};

}  // namespace symmem::detail
