#pragma once
// The TCP rendezvous store hosted by rank 0: set / wait-for-keys with a server-side deadline, and
// detection of ranks whose connection closed without saying goodbye.
//
// The server survives any byte sequence: a malformed frame, one over kMaxFrame, a client that
// never reads its replies (more than kMaxPendingOut queued), or a connection that skips the hello
// only closes that connection (logged on stderr), never the server. A connection joins the job
// with a hello that carries its rank and the job token; a wrong token, a rank out of range or a
// rank that is already connected is refused, and two processes claiming one rank fail the job
// with that reason on every rank.
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "socket.hpp"

namespace symmem::detail {

constexpr size_t kMaxFrame = size_t(16) << 20;       // bytes of one request
constexpr size_t kMaxPendingOut = size_t(32) << 20;  // replies queued for one slow reader

enum class StoreStatus : uint8_t { kOk = 0, kTimeout = 1, kLost = 2, kRefused = 3 };

class StoreServer {
 public:
  /// Binds bind_addr:port (port 0 picks a free one; bind_addr "" or "0.0.0.0": every interface)
  /// and starts serving on a thread. Ranks are [0, world_size); hellos must carry `token`.
  StoreServer(const std::string& bind_addr, int port, int world_size, const std::string& token);
  ~StoreServer();
  int port() const { return port_; }
  /// Waits (bounded) until every client that said hello has disconnected, then stops.
  void drain(int timeout_ms);

 private:
  struct Conn {
    int fd;
    int rank = -1;      // after an accepted hello
    bool bye = false;
    bool closing = false;
    std::string in, out;
  };
  struct Pending {
    int fd;
    std::vector<std::string> keys;
    uint32_t readers;   // erase each key after this many answered reads (0: keep)
    Clock::time_point deadline;
  };
  void loop();
  void handle(Conn& c, const std::string& frame);
  bool try_answer(const Pending& p);
  void reply(int fd, const std::string& payload);
  void flush(Conn& c);
  void reply_missing(const Pending& p, StoreStatus status, const std::string& msg);
  void drop(Conn& c, const std::string& why);
  void fail_all(const std::string& why);

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  int world_size_ = 1;
  std::string token_;
  std::atomic<bool> stop_{false};
  std::atomic<int> live_{0};
  std::vector<Conn> conns_;
  std::vector<Pending> pending_;
  std::map<std::string, std::string> kv_;
  std::map<std::string, uint32_t> reads_;
  std::set<int> ranks_seen_;  // ranks that said hello, live or gone
  std::string lost_;          // who left or what broke the job ("" while none)
  std::string broken_;        // what broke the job for good (two processes with one rank): every
                              // later get fails with it, even of keys that are all there, so that
                              // no rank completes an exchange that another fails ("" while none)
  std::thread thread_;
};

struct StoreReply {
  StoreStatus status;
  std::vector<std::string> values;   // kOk: one per key
  std::vector<uint32_t> missing;     // kTimeout: indexes of keys never set
  std::string message;               // kLost: who left, or what broke the job
};

class StoreClient {
 public:
  /// Connects and says hello (rank, job token); throws InvalidArgument if the server refuses.
  StoreClient(const std::string& addr, int port, int rank, const std::string& token, int connect_timeout_ms);
  ~StoreClient();
  void set(const std::string& key, const std::string& value);
  /// Waits up to timeout_ms for every key; the server answers with values, a timeout naming the
  /// keys never set, or the ranks that left. With readers > 0 the server forgets each key once
  /// it has answered that many reads of it.
  StoreReply get(const std::vector<std::string>& keys, int timeout_ms, uint32_t readers = 0);
  /// Tells the server this rank leaves cleanly.
  void bye();

 private:
  int fd_ = -1;
  bool broken_ = false;
};

}  // namespace symmem::detail
