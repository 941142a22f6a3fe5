#include "symmem/bootstrap.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "log.hpp"
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
  const std::string token = !config.job_token.empty() ? config.job_token
                          : "derived=" + config.master_addr + ":" + std::to_string(config.master_port) + ":" +
                                std::to_string(config.world_size);
  std::string connect_addr = config.master_addr;
  if (config.rank == 0) {
    // Listen where the others will connect: the address MASTER_ADDR names (or SYMMEM_BIND_ADDR).
    std::string bind = !config.bind_addr.empty() ? config.bind_addr : config.master_addr == "localhost" ? "127.0.0.1" : config.master_addr;
    server_ = std::make_unique<detail::StoreServer>(bind, config.master_port, config.world_size, token);
    port_ = server_->port();
    connect_addr = bind == "0.0.0.0" || bind.empty() ? "127.0.0.1" : bind;
  }
  client_ = std::make_unique<detail::StoreClient>(connect_addr, port_, config.rank, token, config.timeout_ms);
  SYMMEM_LOG(kInfo, "joined the job: rank " + std::to_string(config.rank) + " of " + std::to_string(config.world_size) +
                        ", rendezvous store at " + connect_addr + ":" + std::to_string(port_) + " (job token from " +
                        (config.job_token.empty() ? std::string("MASTER_ADDR:MASTER_PORT:WORLD_SIZE") : config.job_token.substr(0, config.job_token.find('='))) + ")" +
                        (config.agent_port ? "; the port derived from the job: torchrun's agent holds MASTER_PORT " + std::to_string(config.agent_port) : ""));
}

Bootstrap::Bootstrap(const BootstrapConfig& config, std::shared_ptr<ExternalStore> store, const std::string& prefix)
    : config_(config), ext_(std::move(store)), prefix_(prefix) {
  require(ext_ != nullptr, "Bootstrap: the external store is null");
  require(config.world_size >= 1, "world_size=" + std::to_string(config.world_size) + " must be at least 1");
  require(config.rank >= 0 && config.rank < config.world_size,
          "rank=" + std::to_string(config.rank) + " must be in [0, world_size=" + std::to_string(config.world_size) + ")");
  require(config.timeout_ms > 0, "timeout_ms must be positive");
  detail::error_rank() = config.rank;
  SYMMEM_LOG(kInfo, "joined the job through an existing store: rank " + std::to_string(config.rank) + " of " +
                        std::to_string(config.world_size) + " (keys under '" + prefix + "')");
}

std::shared_ptr<Bootstrap> Bootstrap::from_env() {
  return std::make_shared<Bootstrap>(bootstrap_config_from_env());
}

Bootstrap::~Bootstrap() {
  if (ext_) return;  // the job's own store outlives this: nobody needs a last exchange through it
  std::vector<int> all(config_.world_size);
  for (int i = 0; i < config_.world_size; ++i) all[i] = i;
  try {
    // Rank 0 must keep the store up until everyone has finished with it. After a failed exchange
    // the others may never come: leave at once rather than wait out a second timeout.
    if (!failed_) all_gather("__finalize__", all, "", "bootstrap finalize", std::min(config_.timeout_ms, 10000));
  } catch (const std::exception&) {
    // A peer is gone; leave anyway.
  }
  try {
    if (client_) client_->bye();
  } catch (...) {
  }
  client_.reset();
  if (server_) server_->drain(2000);
}

// What a store's kLost reply says: a lost rank ("rank 3") exited; anything else is said as it is.
static std::string lost_reason(const std::string& message) {
  return message + (message.rfind("rank ", 0) == 0 ? " exited (its connection to the rendezvous store closed)" : "");
}

static std::string describe_missing(const std::vector<int>& ranks, const std::vector<uint32_t>& missing) {
  std::string s;
  for (size_t i = 0; i < missing.size() && i < 16; ++i)
    s += (i ? ", " : "") + std::to_string(ranks[missing[i]]);
  if (missing.size() > 16) s += ", ... (" + std::to_string(missing.size()) + " in all)";
  return (missing.size() == 1 ? "rank " : "ranks ") + s;
}

// An external store keeps every key until told (the job's own store forgets a key once every
// member has read it). A team's exchanges are keyed "<team name>#<n>", n counting up, and each
// member makes them one after another. When this rank has read every member's key of exchange n,
// every member has set its key of n, which it does only after it returned from exchange n-1, having
// read every member's key of n-1: so no member will read this rank's key of n-1 again, and it is
// removed here. (The last exchange of each team keeps its keys: one a member a team.) Keys with no
// '#' are left alone.
void Bootstrap::forget_previous(const std::string& key) {
  const size_t hash = key.rfind('#');
  if (hash == std::string::npos) return;
  std::string previous;
  {
    std::lock_guard<std::mutex> g(stems_mu_);
    std::string& last = last_of_stem_[key.substr(0, hash)];
    previous.swap(last);
    last = key;
  }
  if (previous.empty()) return;
  try {
    ext_->remove(prefix_ + previous + "/" + std::to_string(config_.rank));
  } catch (...) {
    // Tidying only: a store that cannot delete now keeps the key; the exchange itself succeeded.
  }
}

std::vector<std::string> Bootstrap::all_gather(const std::string& key, const std::vector<int>& ranks,
                                               const std::string& mine, const std::string& what,
                                               int timeout_ms) {
  if (timeout_ms < 0) timeout_ms = config_.timeout_ms;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
  };
  SYMMEM_LOG(kTrace, "waiting up to " + std::to_string(timeout_ms) + " ms in " + what + " for " + std::to_string(ranks.size()) + " ranks (key " + key + ")");
  if (ext_) {
    // Through the job's store: set this rank's key, then read every member's, each with what is
    // left of the bound.
    try {
      ext_->set(prefix_ + key + "/" + std::to_string(config_.rank), mine);
      std::vector<std::string> values(ranks.size());
      for (size_t i = 0; i < ranks.size(); ++i) {
        const auto left = timeout_ms - std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
        if (!ext_->get(prefix_ + key + "/" + std::to_string(ranks[i]), static_cast<int>(std::max<long long>(left, 1)), &values[i])) {
          std::vector<uint32_t> missing;
          for (size_t j = i; j < ranks.size(); ++j) {
            std::string v;
            if (j == i || !ext_->get(prefix_ + key + "/" + std::to_string(ranks[j]), 1, &v)) missing.push_back(static_cast<uint32_t>(j));
          }
          fail<Timeout>("timed out after " + elapsed() + " ms (bound " + std::to_string(timeout_ms) + " ms) in " + what + ": " +
                        describe_missing(ranks, missing) + " never arrived (crashed, hung, or called a different operation?)");
        }
      }
      forget_previous(key);
      return values;
    } catch (...) {
      failed_ = true;
      throw;
    }
  }
  try {
    client_->set(key + "/" + std::to_string(config_.rank), mine);
    std::vector<std::string> keys;
    for (int r : ranks) keys.push_back(key + "/" + std::to_string(r));
    // Every member reads every key once; the store forgets them then.
    detail::StoreReply rep = client_->get(keys, timeout_ms, static_cast<uint32_t>(ranks.size()));
    if (rep.status == detail::StoreStatus::kTimeout)
      fail<Timeout>("timed out after " + elapsed() + " ms (bound " + std::to_string(timeout_ms) + " ms) in " + what + ": " +
                    describe_missing(ranks, rep.missing) + " never arrived (crashed, hung, or called a different operation?)");
    if (rep.status != detail::StoreStatus::kOk)
      fail<PeerLost>(what + " cannot complete after " + elapsed() + " ms: " + lost_reason(rep.message) +
                     (rep.missing.empty() ? "" : "; still missing: " + describe_missing(ranks, rep.missing)));
    return rep.values;
  } catch (...) {
    failed_ = true;
    throw;
  }
}

void Bootstrap::set(const std::string& key, const std::string& value) {
  if (ext_) ext_->set(prefix_ + key, value);
  else client_->set(key, value);
}

std::string Bootstrap::get(const std::string& key, const std::string& what, int timeout_ms) {
  if (timeout_ms < 0) timeout_ms = config_.timeout_ms;
  if (ext_) {
    std::string v;
    if (!ext_->get(prefix_ + key, timeout_ms, &v))
      fail<Timeout>("timed out after " + std::to_string(timeout_ms) + " ms in " + what + " waiting for '" + key + "'");
    return v;
  }
  detail::StoreReply rep = client_->get({key}, timeout_ms);
  if (rep.status == detail::StoreStatus::kTimeout)
    fail<Timeout>("timed out after " + std::to_string(timeout_ms) + " ms in " + what + " waiting for '" + key + "'");
  if (rep.status == detail::StoreStatus::kLost)
    fail<PeerLost>(what + " cannot complete: " + lost_reason(rep.message));
  return rep.values[0];
}

}  // namespace symmem
