#pragma once
// An in-memory ExternalStore (the kind of store symmem.init joins through torch's), shared by ranks
// run as threads of one process: the host tests of the bootstrap and of teams over such a store.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "symmem/bootstrap.hpp"

namespace symmem::test {

class MemoryStore : public ExternalStore {
 public:
  void set(const std::string& k, const std::string& v) override {
    std::lock_guard<std::mutex> g(mu_);
    kv_[k] = v;
    cv_.notify_all();
  }
  bool get(const std::string& k, int timeout_ms, std::string* v) override {
    std::unique_lock<std::mutex> g(mu_);
    if (!cv_.wait_for(g, std::chrono::milliseconds(timeout_ms), [&] { return kv_.count(k) > 0; })) return false;
    *v = kv_[k];
    return true;
  }
  void remove(const std::string& k) override {
    std::lock_guard<std::mutex> g(mu_);
    if (kv_.erase(k) == 0) removed_unknown_ = true;
  }
  /// The keys held now, in order.
  std::vector<std::string> keys() {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<std::string> out;
    for (auto& kv : kv_) out.push_back(kv.first);
    return out;
  }
  /// Whether a key was removed that the store did not hold (removed twice, or never set).
  bool removed_unknown() {
    std::lock_guard<std::mutex> g(mu_);
    return removed_unknown_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> kv_;
  bool removed_unknown_ = false;
};

/// n ranks as threads, each running fn(its Bootstrap over `store` with key prefix `prefix`, rank);
/// each rank's error, if it raised one (else "").
inline std::vector<std::string> on_threads(const std::shared_ptr<MemoryStore>& store, int n, const std::string& prefix,
                                           const std::function<void(const std::shared_ptr<Bootstrap>&, int)>& fn) {
  std::vector<std::string> errors(n);
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      BootstrapConfig c;
      c.rank = r;
      c.world_size = n;
      c.timeout_ms = 5000;
      try {
        fn(std::make_shared<Bootstrap>(c, store, prefix), r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : ts) t.join();
  return errors;
}

}  // namespace symmem::test
