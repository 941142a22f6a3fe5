#include "store.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>

#include "symmem/error.hpp"

namespace symmem::detail {

StoreServer::StoreServer(const std::string& addr, int port) {
  listen_fd_ = tcp_listen(addr == "127.0.0.1" || addr == "localhost" ? addr : "", port);
  port_ = bound_port(listen_fd_);
  if (pipe2(wake_, O_CLOEXEC) != 0) throw_system("pipe2()", errno);
  thread_ = std::thread([this] { loop(); });
}

StoreServer::~StoreServer() {
  stop_ = true;
  char c = 0;
  (void)!write(wake_[1], &c, 1);
  if (thread_.joinable()) thread_.join();
  for (auto& c2 : conns_) close(c2.fd);
  close(listen_fd_);
  close(wake_[0]);
  close(wake_[1]);
}

void StoreServer::drain(int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (live_.load() > 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

void StoreServer::loop() {
  std::vector<pollfd> fds;
  while (!stop_) {
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({wake_[0], POLLIN, 0});
    for (auto& c : conns_) fds.push_back({c.fd, POLLIN, 0});
    int wait_ms = 1000;
    for (auto& p : pending_) wait_ms = std::min(wait_ms, ms_left(p.deadline));
    int rc = poll(fds.data(), fds.size(), wait_ms);
    if (rc < 0 && errno != EINTR) break;
    if (stop_) break;
    if (fds[0].revents & POLLIN) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        // Replies go out at once: without this, Nagle's algorithm and the client's delayed ACK
        // held every small reply ~40 ms.
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        Conn c;
        c.fd = fd;
        conns_.push_back(std::move(c));
      }
    }
    std::vector<int> closed;
    for (size_t i = 2; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Conn& c = conns_[i - 2];
      char tmp[65536];
      ssize_t k = recv(c.fd, tmp, sizeof(tmp), MSG_DONTWAIT);
      if (k <= 0) {
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        closed.push_back(c.fd);
        continue;
      }
      c.buf.append(tmp, static_cast<size_t>(k));
      while (c.buf.size() >= 4) {
        uint32_t len;
        std::memcpy(&len, c.buf.data(), 4);
        if (c.buf.size() < 4 + static_cast<size_t>(len)) break;
        std::string frame = c.buf.substr(4, len);
        c.buf.erase(0, 4 + len);
        handle(c, frame);
      }
    }
    for (int fd : closed) {
      auto it = std::find_if(conns_.begin(), conns_.end(), [&](const Conn& c) { return c.fd == fd; });
      if (it == conns_.end()) continue;
      if (it->rank >= 0) {
        live_--;
        if (!it->bye) {
          lost_ += (lost_.empty() ? "rank " : ", rank ") + std::to_string(it->rank);
        }
      }
      pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.fd == fd; }),
                     pending_.end());
      close(fd);
      conns_.erase(it);
      if (!lost_.empty()) {
        // Every wait that cannot be met any more learns who left, now rather than at its deadline.
        std::vector<Pending> keep;
        for (auto& p : pending_) reply_missing(p, static_cast<uint8_t>(StoreStatus::kLost), lost_);
        pending_.swap(keep);
      }
    }
    // Deadlines.
    auto now = Clock::now();
    std::vector<Pending> keep;
    for (auto& p : pending_) {
      if (now >= p.deadline) reply_missing(p, static_cast<uint8_t>(StoreStatus::kTimeout), "");
      else keep.push_back(std::move(p));
    }
    pending_.swap(keep);
  }
}

void StoreServer::handle(Conn& c, const std::string& frame) {
  Reader r{frame};
  uint8_t op = r.u8();
  if (op == 'H') {
    c.rank = static_cast<int>(r.u32());
    live_++;
  } else if (op == 'B') {
    c.bye = true;
  } else if (op == 'S') {
    std::string key = r.str();
    kv_[key] = r.str();
    std::vector<Pending> keep;
    for (auto& p : pending_)
      if (!try_answer(p)) keep.push_back(std::move(p));
    pending_.swap(keep);
  } else if (op == 'G') {
    Pending p{c.fd, {}, Clock::now() + std::chrono::milliseconds(r.u32())};
    uint32_t n = r.u32();
    for (uint32_t i = 0; i < n; ++i) p.keys.push_back(r.str());
    if (try_answer(p)) return;
    if (!lost_.empty()) reply_missing(p, static_cast<uint8_t>(StoreStatus::kLost), lost_);
    else pending_.push_back(std::move(p));
  }
}

bool StoreServer::try_answer(const Pending& p) {
  for (auto& k : p.keys)
    if (!kv_.count(k)) return false;
  std::string out(1, static_cast<char>(StoreStatus::kOk));
  put_u32(out, static_cast<uint32_t>(p.keys.size()));
  for (auto& k : p.keys) put_str(out, kv_[k]);
  send_frame(p.fd, out);
  return true;
}

void StoreServer::reply_missing(const Pending& p, uint8_t status, const std::string& msg) {
  std::string out(1, static_cast<char>(status));
  std::vector<uint32_t> missing;
  for (uint32_t i = 0; i < p.keys.size(); ++i)
    if (!kv_.count(p.keys[i])) missing.push_back(i);
  put_u32(out, static_cast<uint32_t>(missing.size()));
  for (uint32_t i : missing) put_u32(out, i);
  put_str(out, msg);
  send_frame(p.fd, out);
}

StoreClient::StoreClient(const std::string& addr, int port, int rank, int connect_timeout_ms) {
  fd_ = tcp_connect(addr, port, Clock::now() + std::chrono::milliseconds(connect_timeout_ms),
                    "the rendezvous store of rank 0");
  std::string hello(1, 'H');
  put_u32(hello, static_cast<uint32_t>(rank));
  if (!send_frame(fd_, hello)) fail<PeerLost>("the rendezvous store at rank 0 closed the connection");
}

StoreClient::~StoreClient() {
  if (fd_ >= 0) close(fd_);
}

void StoreClient::set(const std::string& key, const std::string& value) {
  std::string m(1, 'S');
  put_str(m, key);
  put_str(m, value);
  if (broken_ || !send_frame(fd_, m))
    fail<PeerLost>("lost the rendezvous store at rank 0 (did rank 0 exit?)");
}

void StoreClient::bye() {
  if (!broken_) send_frame(fd_, std::string(1, 'B'));
}

StoreReply StoreClient::get(const std::vector<std::string>& keys, int timeout_ms) {
  if (broken_) fail<PeerLost>("the rendezvous store connection is unusable after an earlier failure");
  std::string m(1, 'G');
  put_u32(m, static_cast<uint32_t>(timeout_ms));
  put_u32(m, static_cast<uint32_t>(keys.size()));
  for (auto& k : keys) put_str(m, k);
  if (!send_frame(fd_, m)) {
    broken_ = true;
    fail<PeerLost>("lost the rendezvous store at rank 0 (did rank 0 exit?)");
  }
  std::string frame;
  // The server answers by its own deadline; ours only guards against a dead server.
  int rc = recv_frame(fd_, &frame, Clock::now() + std::chrono::milliseconds(timeout_ms + 10000));
  if (rc != 1) {
    broken_ = true;
    fail<PeerLost>(rc == 0 ? "lost the rendezvous store at rank 0 (did rank 0 exit?)"
                           : "the rendezvous store at rank 0 stopped answering");
  }
  Reader r{frame};
  StoreReply out;
  out.status = static_cast<StoreStatus>(r.u8());
  uint32_t n = r.u32();
  if (out.status == StoreStatus::kOk) {
    for (uint32_t i = 0; i < n; ++i) out.values.push_back(r.str());
  } else {
    for (uint32_t i = 0; i < n; ++i) out.missing.push_back(r.u32());
    out.message = r.str();
  }
  return out;
}

}  // namespace symmem::detail
