#pragma once
// Bootstrap: how the ranks of a job find each other. Rank 0 hosts a TCP rendezvous store; every
// exchange has a deadline, and a rank that never arrives or exits is named in the error.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "symmem/env.hpp"
#include "symmem/export.hpp"

namespace symmem {

namespace detail {
class StoreServer;
class StoreClient;
}  // namespace detail

/// A key-value store the job already has (torch.distributed's TCPStore, say): a Bootstrap over it
/// starts no server and opens no port of its own. Keys are never reused.
class SYMMEM_API ExternalStore {
 public:
  virtual ~ExternalStore() = default;
  virtual void set(const std::string& key, const std::string& value) = 0;
  /// Waits up to timeout_ms for `key`; false when it never came.
  virtual bool get(const std::string& key, int timeout_ms, std::string* value) = 0;
  /// Deletes `key`, which every member has read (a team's exchanges would otherwise pile up in the
  /// store: one key a member an exchange). The default keeps it.
  virtual void remove(const std::string& key) { (void)key; }
};

class SYMMEM_API Bootstrap {
 public:
  /// Joins the job described by `config` (rank 0 starts the store). Throws Timeout if rank 0
  /// cannot be reached within config.timeout_ms.
  explicit Bootstrap(const BootstrapConfig& config);
  /// Joins through an existing store: config gives rank, world size, local rank and timeout
  /// (master_addr and master_port are ignored). Every key symmem writes starts with `prefix`.
  Bootstrap(const BootstrapConfig& config, std::shared_ptr<ExternalStore> store, const std::string& prefix);
  /// Joins from the environment that torchrun, mpirun or symmem-run set.
  static std::shared_ptr<Bootstrap> from_env();
  /// Leaves cleanly: a final barrier (bounded), then goodbye; rank 0 stops the store last.
  ~Bootstrap();
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  int rank() const { return config_.rank; }
  int world_size() const { return config_.world_size; }
  const BootstrapConfig& config() const { return config_; }
  /// TCP port of the store (useful when config.master_port was 0 on a one-rank job).
  int port() const { return port_; }

  /// Gathers one blob from each of `ranks` (global ranks, this one among them) under the unique
  /// key `key`; returns them in the order of `ranks`. `what` names the operation in errors.
  std::vector<std::string> all_gather(const std::string& key, const std::vector<int>& ranks,
                                      const std::string& mine, const std::string& what,
                                      int timeout_ms = -1);
  /// Publishes a value under `key` for any rank to read.
  void set(const std::string& key, const std::string& value);
  /// Reads `key`, waiting up to the timeout for some rank to set it.
  std::string get(const std::string& key, const std::string& what, int timeout_ms = -1);

 private:
  BootstrapConfig config_;
  int port_ = 0;
  bool failed_ = false;  // an exchange failed: the destructor does not wait for the others
  std::unique_ptr<detail::StoreServer> server_;
  std::unique_ptr<detail::StoreClient> client_;
  std::shared_ptr<ExternalStore> ext_;
  std::string prefix_;
  // External store: per key stem (a team's name, the key up to its last '#'), this rank's key of
  // the stem's last exchange, removed once the next one completes (all_gather says why it may).
  void forget_previous(const std::string& key);
  std::mutex stems_mu_;
  std::map<std::string, std::string> last_of_stem_;
};

}  // namespace symmem
