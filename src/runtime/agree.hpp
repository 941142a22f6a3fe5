#pragma once
// SYMMEM_DEBUG_CHECKS=1 for operations over a communicator (overlap, MoE): a call's local checks
// and the arguments every rank must pass alike, agreed across the team before anything runs.
#include <string>

#include "symmem/collectives.hpp"
#include "symmem/error.hpp"

namespace symmem::detail {

/// Runs `local_checks` (which throw InvalidArgument). With SYMMEM_DEBUG_CHECKS=1 their refusal on
/// any rank, or `mine()` (space-separated name=value fields) differing across ranks, is raised on
/// every rank, naming the rank and its reason or the fields that differ (Team::require_same);
/// without it they raise where they fail, and nothing else is done (`mine` is called only under
/// the checks: no strings on the hot path).
template <class Mine, class F>
void checked_alike(Communicator& comm, const char* what, Mine&& mine, F&& local_checks) {
  if (!comm.context().settings().debug_checks) {
    local_checks();
    return;
  }
  std::string refusal;
  try {
    local_checks();
  } catch (const InvalidArgument& e) {
    refusal = e.what();
  }
  comm.team().require_same(mine(), what, refusal);
}

}  // namespace symmem::detail
