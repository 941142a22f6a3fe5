#pragma once
// The TCP rendezvous store hosted by rank 0: set / wait-for-keys with a server-side deadline, and
// detection of ranks whose connection closed without saying goodbye.
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "socket.hpp"

namespace symmem::detail {

class StoreServer {
 public:
  /// Binds addr:port (port 0 picks a free one) and starts serving on a thread.
  StoreServer(const std::string& addr, int port);
  ~StoreServer();
  int port() const { return port_; }
  /// Waits (bounded) until every client that said hello has disconnected, then stops.
  void drain(int timeout_ms);

 private:
  struct Conn {
    int fd;
    int rank = -1;
    bool bye = false;
    std::string buf;
  };
  struct Pending {
    int fd;
    std::vector<std::string> keys;
    Clock::time_point deadline;
  };
  void loop();
  void handle(Conn& c, const std::string& frame);
  bool try_answer(const Pending& p);
  void reply_missing(const Pending& p, uint8_t status, const std::string& msg);

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> live_{0};
  std::vector<Conn> conns_;
  std::vector<Pending> pending_;
  std::map<std::string, std::string> kv_;
  std::string lost_;  // description of ranks that left without goodbye ("" while none)
  std::thread thread_;
};

enum class StoreStatus : uint8_t { kOk = 0, kTimeout = 1, kLost = 2 };

struct StoreReply {
  StoreStatus status;
  std::vector<std::string> values;   // kOk: one per key
  std::vector<uint32_t> missing;     // kTimeout: indexes of keys never set
  std::string message;               // kLost: who left
};

class StoreClient {
 public:
  StoreClient(const std::string& addr, int port, int rank, int connect_timeout_ms);
  ~StoreClient();
  void set(const std::string& key, const std::string& value);
  /// Waits up to timeout_ms for every key; the server answers with values, a timeout naming the
  /// keys never set, or the ranks that left.
  StoreReply get(const std::vector<std::string>& keys, int timeout_ms);
  /// Tells the server this rank leaves cleanly.
  void bye();

 private:
  int fd_ = -1;
  bool broken_ = false;
};

}  // namespace symmem::detail
