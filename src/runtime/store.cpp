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

namespace {
void log_store(const std::string& msg) {
  std::string line = rank_prefix() + "rendezvous store: " + msg + "\n";
  (void)!write(2, line.data(), line.size());
}
void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }
}  // namespace

StoreServer::StoreServer(const std::string& bind_addr, int port, int world_size, const std::string& token)
    : world_size_(world_size), token_(token) {
  listen_fd_ = tcp_listen(bind_addr == "0.0.0.0" ? "" : bind_addr, port);
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

void StoreServer::drop(Conn& c, const std::string& why) {
  if (c.closing) return;
  c.closing = true;
  if (!why.empty()) log_store("closed a connection" + (c.rank >= 0 ? " of rank " + std::to_string(c.rank) : std::string()) + ": " + why);
}

void StoreServer::fail_all(const std::string& why) {
  if (lost_.empty()) lost_ = why;
  for (auto& p : pending_) reply_missing(p, StoreStatus::kLost, lost_);
  pending_.clear();
}

void StoreServer::reply(int fd, const std::string& payload) {
  auto it = std::find_if(conns_.begin(), conns_.end(), [&](const Conn& c) { return c.fd == fd; });
  if (it == conns_.end() || it->closing) return;
  uint32_t len = static_cast<uint32_t>(payload.size());
  it->out.append(reinterpret_cast<const char*>(&len), 4);
  it->out += payload;
  flush(*it);
}

void StoreServer::flush(Conn& c) {
  // Send what the socket takes now; the rest waits for POLLOUT, so one slow reader never stalls the others.
  while (!c.out.empty()) {
    ssize_t k = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      c.out.erase(0, static_cast<size_t>(k));
    } else {
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      drop(c, "");  // the peer is gone; the read side would report it too
      return;
    }
  }
  if (c.out.size() > kMaxPendingOut) drop(c, "it does not read its replies (" + std::to_string(c.out.size()) + " bytes queued)");
}

void StoreServer::loop() {
  std::vector<pollfd> fds;
  while (!stop_) {
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({wake_[0], POLLIN, 0});
    for (auto& c : conns_) fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
    int wait_ms = 1000;
    for (auto& p : pending_) wait_ms = std::min(wait_ms, ms_left(p.deadline));
    int rc = poll(fds.data(), fds.size(), wait_ms);
    if (rc < 0 && errno != EINTR) break;
    if (stop_) break;
    const size_t nconns = conns_.size();  // connections accepted below are polled next round
    if (fds[0].revents & POLLIN) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        // Replies go out at once: without this, Nagle's algorithm and the client's delayed ACK
        // held every small reply ~40 ms.
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        set_nonblocking(fd);
        Conn c;
        c.fd = fd;
        conns_.push_back(std::move(c));
      }
    }
    for (size_t i = 0; i < nconns; ++i) {
      const short ev = fds[i + 2].revents;
      Conn& c = conns_[i];
      if (c.closing) continue;
      if ((ev & POLLOUT) && !c.out.empty()) flush(c);
      if (!(ev & (POLLIN | POLLHUP | POLLERR))) continue;
      char tmp[65536];
      ssize_t k = recv(c.fd, tmp, sizeof(tmp), MSG_DONTWAIT);
      if (k <= 0) {
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        drop(c, "");
        continue;
      }
      c.in.append(tmp, static_cast<size_t>(k));
      while (c.in.size() >= 4 && !c.closing) {
        uint32_t len;
        std::memcpy(&len, c.in.data(), 4);
        if (len == 0 || len > kMaxFrame) {
          drop(c, "a frame of " + std::to_string(len) + " bytes (requests are 1 to " + std::to_string(kMaxFrame) + " bytes)");
          break;
        }
        if (c.in.size() < 4 + static_cast<size_t>(len)) break;
        std::string frame = c.in.substr(4, len);
        c.in.erase(0, 4 + len);
        try {
          handle(conns_[i], frame);
        } catch (const std::exception& e) {
          drop(conns_[i], std::string("malformed message (") + e.what() + ")");
        }
      }
    }
    // Close what was dropped; a rank that leaves without goodbye fails every wait at once.
    for (size_t i = 0; i < conns_.size();) {
      Conn& c = conns_[i];
      if (!c.closing) { ++i; continue; }
      if (c.rank >= 0) {
        live_--;
        if (!c.bye) lost_ += (lost_.empty() ? "rank " : ", rank ") + std::to_string(c.rank);
      }
      const int fd = c.fd;
      pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.fd == fd; }),
                     pending_.end());
      close(fd);
      conns_.erase(conns_.begin() + static_cast<long>(i));
      if (!lost_.empty()) fail_all(lost_);
    }
    // Deadlines.
    auto now = Clock::now();
    std::vector<Pending> keep;
    for (auto& p : pending_) {
      if (now >= p.deadline) reply_missing(p, StoreStatus::kTimeout, "");
      else keep.push_back(std::move(p));
    }
    pending_.swap(keep);
  }
}

void StoreServer::handle(Conn& c, const std::string& frame) {
  Reader r{frame};
  uint8_t op = r.u8();
  if (op == 'H') {
    const uint32_t rank = r.u32();
    const std::string token = r.str();
    std::string refuse;
    if (c.rank >= 0) refuse = "a second hello on one connection";
    else if (token != token_) refuse = "its job token differs: it belongs to another job (or another launch)";
    else if (rank >= static_cast<uint32_t>(world_size_))
      refuse = "rank " + std::to_string(rank) + " is out of range for a job of " + std::to_string(world_size_) + " ranks";
    else if (std::any_of(conns_.begin(), conns_.end(), [&](const Conn& o) { return o.rank == static_cast<int>(rank) && !o.closing; })) {
      refuse = "rank " + std::to_string(rank) + " is already connected: two processes were started with RANK=" + std::to_string(rank);
      broken_ = "the job cannot go on: " + refuse;
      fail_all(broken_);
    }
    std::string out(1, static_cast<char>(refuse.empty() ? StoreStatus::kOk : StoreStatus::kRefused));
    put_str(out, refuse);
    reply(c.fd, out);
    if (!refuse.empty()) {
      drop(c, "refused a hello: " + refuse);
      return;
    }
    c.rank = static_cast<int>(rank);
    live_++;
    ranks_seen_.insert(c.rank);
    return;
  }
  if (c.rank < 0) throw std::runtime_error("a request before the hello");
  if (op == 'B') {
    c.bye = true;
  } else if (op == 'S') {
    std::string key = r.str();
    kv_[key] = r.str();
    std::vector<Pending> keep;
    for (auto& p : pending_)
      if (!try_answer(p)) keep.push_back(std::move(p));
    pending_.swap(keep);
  } else if (op == 'G') {
    const uint32_t timeout_ms = r.u32();
    Pending p{c.fd, {}, r.u32(), Clock::now() + std::chrono::milliseconds(timeout_ms)};
    uint32_t n = r.u32();
    if (n > frame.size() / 4) throw std::runtime_error("key count past the frame");
    for (uint32_t i = 0; i < n; ++i) p.keys.push_back(r.str());
    if (!broken_.empty()) reply_missing(p, StoreStatus::kLost, broken_);  // (answered or not, the job is over)
    else if (try_answer(p)) return;
    else if (!lost_.empty()) reply_missing(p, StoreStatus::kLost, lost_);
    else pending_.push_back(std::move(p));
  } else {
    throw std::runtime_error("unknown request " + std::to_string(op));
  }
}

bool StoreServer::try_answer(const Pending& p) {
  for (auto& k : p.keys)
    if (!kv_.count(k)) return false;
  std::string out(1, static_cast<char>(StoreStatus::kOk));
  put_u32(out, static_cast<uint32_t>(p.keys.size()));
  for (auto& k : p.keys) put_str(out, kv_[k]);
  reply(p.fd, out);
  if (p.readers > 0)
    for (auto& k : p.keys)
      if (++reads_[k] >= p.readers) {  // every member has read it: forget it
        kv_.erase(k);
        reads_.erase(k);
      }
  return true;
}

void StoreServer::reply_missing(const Pending& p, StoreStatus status, const std::string& msg) {
  std::string out(1, static_cast<char>(status));
  std::vector<uint32_t> missing;
  for (uint32_t i = 0; i < p.keys.size(); ++i)
    if (!kv_.count(p.keys[i])) missing.push_back(i);
  put_u32(out, static_cast<uint32_t>(missing.size()));
  for (uint32_t i : missing) put_u32(out, i);
  put_str(out, msg);
  reply(p.fd, out);
}

StoreClient::StoreClient(const std::string& addr, int port, int rank, const std::string& token, int connect_timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(connect_timeout_ms);
  fd_ = tcp_connect(addr, port, deadline, "the rendezvous store of rank 0");
  std::string hello(1, 'H');
  put_u32(hello, static_cast<uint32_t>(rank));
  put_str(hello, token);
  std::string frame;
  if (!send_frame(fd_, hello) || recv_frame(fd_, &frame, deadline) != 1)
    fail<PeerLost>("the rendezvous store at rank 0 closed the connection or did not answer the hello");
  Reader r{frame};
  const auto status = static_cast<StoreStatus>(r.u8());
  const std::string why = r.str();
  if (status != StoreStatus::kOk) {
    close(fd_);
    fd_ = -1;
    fail<InvalidArgument>("the rendezvous store refused rank " + std::to_string(rank) + ": " + why +
                          " (check RANK, WORLD_SIZE, MASTER_ADDR/MASTER_PORT and SYMMEM_JOB_TOKEN)");
  }
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

StoreReply StoreClient::get(const std::vector<std::string>& keys, int timeout_ms, uint32_t readers) {
  if (broken_) fail<PeerLost>("the rendezvous store connection is unusable after an earlier failure");
  std::string m(1, 'G');
  put_u32(m, static_cast<uint32_t>(timeout_ms));
  put_u32(m, readers);
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
