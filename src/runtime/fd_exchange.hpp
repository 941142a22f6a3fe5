#pragma once
// Passes file descriptors between the processes of one host: a Unix datagram socket per rank in
// the abstract namespace, fds carried as SCM_RIGHTS ancillary data.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace symmem::detail {

class FdExchange {
 public:
  /// Binds this rank's socket; every member must have bound before the first exchange.
  FdExchange(const std::string& prefix, int rank, int nranks);
  ~FdExchange();
  /// Sends `fd` to every other member and returns theirs by rank (own slot: -1). Received fds are
  /// owned by the caller. Throws Timeout naming the members that never sent.
  std::vector<int> exchange(int fd, uint64_t seq, int timeout_ms);

 private:
  std::string address(int rank) const;
  std::string prefix_;
  int rank_, nranks_;
  int sock_ = -1;
  std::map<std::pair<uint64_t, int>, int> early_;  // (seq, sender) -> fd that arrived ahead
};

}  // namespace symmem::detail
