#include "symmem/bootstrap.hpp"

#include <cstdio>

#include "store.hpp"
#include "symmem/error.hpp"

namespace symmem {

Bootstrap::Bootstrap(const BootstrapConfig& config) : config_(config) {
  require(config.world_size >= 1, "world_size=" + std::to_string(config.world_size) + " must be at least 1");
  require(config.rank >= 0 && config.rank < config.world_size,
          "rank=" + std::to_string(config.rank) + " must be in [0, world_size=" + std::to_string(config.world_size) + ")");
  require(config.world_size == 1 || config.master_port > 0,
          "master_port is 0 with world_size " + std::to_string(config.world_size) + ": set MASTER_PORT");
  require(config.timeout_ms > 0, "timeout_ms must be positive");
  detail::error_rank() = config.rank;
  port_ = config.master_port;
  if (config.rank == 0) {
    server_ = std::make_unique<detail::StoreServer>(config.master_addr, config.master_port);
    port_ = server_->port();
  }
  client_ = std::make_unique<detail::StoreClient>(config.rank == 0 ? "127.0.0.1" : config.master_addr, port_,
                                                  config.rank, config.timeout_ms);
}

std::shared_ptr<Bootstrap> Bootstrap::from_env() {
  return std::make_shared<Bootstrap>(bootstrap_config_from_env());
}

Bootstrap::~Bootstrap() {
  std::vector<int> all(config_.world_size);
  for (int i = 0; i < config_.world_size; ++i) all[i] = i;
  try {
    // Rank 0 must keep the store up until everyone has finished with it.
    all_gather("__finalize__", all, "", "bootstrap finalize", std::min(config_.timeout_ms, 10000));
  } catch (const std::exception&) {
    // A peer is gone; leave anyway.
  }
  try {
    client_->bye();
  } catch (...) {
  }
  client_.reset();
  if (server_) server_->drain(2000);
}

static std::string describe_missing(const std::vector<int>& ranks, const std::vector<uint32_t>& missing) {
  std::string s;
  for (size_t i = 0; i < missing.size() && i < 16; ++i)
    s += (i ? ", " : "") + std::to_string(ranks[missing[i]]);
  if (missing.size() > 16) s += ", ... (" + std::to_string(missing.size()) + " in all)";
  return (missing.size() == 1 ? "rank " : "ranks ") + s;
}

std::vector<std::string> Bootstrap::all_gather(const std::string& key, const std::vector<int>& ranks,
                                               const std::string& mine, const std::string& what,
                                               int timeout_ms) {
  if (timeout_ms < 0) timeout_ms = config_.timeout_ms;
  client_->set(key + "/" + std::to_string(config_.rank), mine);
  std::vector<std::string> keys;
  for (int r : ranks) keys.push_back(key + "/" + std::to_string(r));
  detail::StoreReply rep = client_->get(keys, timeout_ms);
  if (rep.status == detail::StoreStatus::kTimeout)
    fail<Timeout>("timed out after " + std::to_string(timeout_ms) + " ms in " + what + ": " +
                  describe_missing(ranks, rep.missing) +
                  " never arrived (crashed, hung, or called a different operation?)");
  if (rep.status == detail::StoreStatus::kLost)
    fail<PeerLost>(what + " cannot complete: " + rep.message +
                   " exited (its connection to the rendezvous store closed); still missing: " +
                   describe_missing(ranks, rep.missing));
  return rep.values;
}

void Bootstrap::set(const std::string& key, const std::string& value) { client_->set(key, value); }

std::string Bootstrap::get(const std::string& key, const std::string& what, int timeout_ms) {
  if (timeout_ms < 0) timeout_ms = config_.timeout_ms;
  detail::StoreReply rep = client_->get({key}, timeout_ms);
  if (rep.status == detail::StoreStatus::kTimeout)
    fail<Timeout>("timed out after " + std::to_string(timeout_ms) + " ms in " + what + " waiting for '" + key + "'");
  if (rep.status == detail::StoreStatus::kLost)
    fail<PeerLost>(what + " cannot complete: " + rep.message + " exited (its connection to the rendezvous store closed)");
  return rep.values[0];
}

}  // namespace symmem
