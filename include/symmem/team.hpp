#pragma once
// Teams: the world, sub-teams made by split (color/key, like MPI_Comm_split), and the ranks of
// this host. A team is a cheap handle; copies share the same exchange sequence.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "symmem/bootstrap.hpp"
#include "symmem/export.hpp"

namespace symmem {

class SYMMEM_API Team {
 public:
  /// The team of every rank of `boot`.
  static Team world(std::shared_ptr<Bootstrap> boot);
  Team() = default;

  bool valid() const { return state_ != nullptr; }
  /// This rank's index in the team, and the team's size.
  int rank() const;
  int size() const;
  /// Global rank of team member `team_rank`.
  int global_rank(int team_rank) const;
  const std::vector<int>& global_ranks() const;
  const std::string& name() const;
  Bootstrap& bootstrap() const;
  std::shared_ptr<Bootstrap> bootstrap_ptr() const;

  /// Gathers one blob per member, in team order. Collective over the team.
  std::vector<std::string> all_gather(const std::string& mine, const std::string& what) const;
  /// Returns when every member has arrived. Collective over the team.
  void barrier(const std::string& what) const;
  /// Agreement before a step every member takes alike. Gathers `mine` (space-separated name=value
  /// fields) and raises InvalidArgument on every member where a member passes a `refusal` (its own
  /// checks' error): "<what>: rank R refused: <why>" (the lowest such rank); else where any
  /// member's fields differ: "<what>: arguments differ across ranks (<fields>): this rank has
  /// '...', rank R has '...'" followed by `hint`; where a member made another exchange of the team
  /// at this point (a barrier, or another call first): "<what>: rank R is not making this call: it
  /// made the barrier '<its what>' ...". `fact` (no newline) travels beside, not compared: returns
  /// every member's, in team order. Collective.
  std::vector<std::string> require_same(const std::string& mine, const std::string& what, const std::string& refusal = "",
                                        const std::string& fact = "", const std::string& hint = "") const;
  /// Members with the same color form a team, ordered by (key, rank). A negative color joins no
  /// team and gets an invalid Team back. Collective over this team. Where a member made another
  /// exchange of the team at this point, raises InvalidArgument as require_same does ("Team::split:
  /// rank R is not making this call: ..."), and so does host_team.
  Team split(int color, int key) const;
  /// The members that share this host (by host name and boot id). Collective over this team.
  Team host_team() const;

 private:
  struct State;
  explicit Team(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::string next_key() const;
  std::shared_ptr<State> state_;
};

namespace detail {
/// Split math: given every member's (color, key), the members (indexes) of `me`'s new team, in
/// (key, index) order; empty when `me`'s color is negative.
SYMMEM_API std::vector<int> split_members(const std::vector<std::pair<int, int>>& color_key, int me);
/// A string naming this host: host name plus kernel boot id.
SYMMEM_API std::string host_identity();
}  // namespace detail

}  // namespace symmem
