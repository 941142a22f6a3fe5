#pragma once
// Passes file descriptors between the processes of one host: a Unix datagram socket per rank in
// the abstract namespace, fds carried as SCM_RIGHTS ancillary data.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "symmem/export.hpp"

namespace symmem::detail {

class SYMMEM_API FdExchange {
 public:
  /// Binds this rank's socket. Members may bind in any order: sends to one not bound yet are
  /// retried until the exchange's deadline.
  FdExchange(const std::string& prefix, int rank, int nranks);
  ~FdExchange();
  /// Sends `fd` to every other member and returns theirs by rank (own slot: -1). Received fds are
  /// owned by the caller. Any team size: sends and receives interleave. Throws Timeout naming
  /// the members that never sent; closes every fd it received on every error path.
  std::vector<int> exchange(int fd, uint64_t seq, int timeout_ms);

 private:
  std::string address(int rank) const;
  std::string prefix_;
  int rank_, nranks_;
  int sock_ = -1;
  std::map<std::pair<uint64_t, int>, int> early_;  // (seq, sender) -> fd that arrived ahead
};

}  // namespace symmem::detail
