#include "symmem/team.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "symmem/env.hpp"
#include "symmem/error.hpp"

namespace symmem {

struct Team::State {
  std::shared_ptr<Bootstrap> boot;
  std::vector<int> ranks;  // global ranks, in team order
  int me = -1;             // index of this rank
  std::string name;
  unsigned long seq = 0;   // exchanges made so far (the same on every member)
};

Team Team::world(std::shared_ptr<Bootstrap> boot) {
  require(boot != nullptr, "Team::world: bootstrap is null");
  auto s = std::make_shared<State>();
  for (int i = 0; i < boot->world_size(); ++i) s->ranks.push_back(i);
  s->me = boot->rank();
  s->name = "world";
  s->boot = std::move(boot);
  return Team(s);
}

static void check_valid(const void* s) { require(s != nullptr, "this Team is invalid (a negative split color, or default-constructed)"); }

int Team::rank() const { check_valid(state_.get()); return state_->me; }
int Team::size() const { check_valid(state_.get()); return static_cast<int>(state_->ranks.size()); }
int Team::global_rank(int r) const {
  check_valid(state_.get());
  require(r >= 0 && r < size(), "team rank ", r, " is out of range [0, ", size(), ")");
  return state_->ranks[r];
}
const std::vector<int>& Team::global_ranks() const { check_valid(state_.get()); return state_->ranks; }
const std::string& Team::name() const { check_valid(state_.get()); return state_->name; }
Bootstrap& Team::bootstrap() const { check_valid(state_.get()); return *state_->boot; }
std::shared_ptr<Bootstrap> Team::bootstrap_ptr() const { check_valid(state_.get()); return state_->boot; }

std::string Team::next_key() const { return state_->name + "#" + std::to_string(state_->seq++); }

std::vector<std::string> Team::all_gather(const std::string& mine, const std::string& what) const {
  check_valid(state_.get());
  return state_->boot->all_gather(next_key(), state_->ranks, mine, what + " (team " + state_->name + ")");
}

// A barrier's blob names it, so that a member that meets it in an agreement or a split (a call the
// barrier's member skipped) can say where that member is. Agreements, splits and host teams mark
// their blobs too ('!' or '=', 'S', 'H'), and raise where a member's blob is not of their kind: its
// calls on the team differ from this rank's (it skipped this one, or made another first). Only the
// ranks in such a call raise (a barrier passes, as it always did), and every rank has spent one
// exchange, so the ranks stay in step.
void Team::barrier(const std::string& what) const { all_gather("~" + what, what); }

[[noreturn]] static void fail_other_exchange(const Team& team, const std::string& what, size_t r, const std::string& blob) {
  const std::string theirs = !blob.empty() && blob[0] == '~' ? "the barrier '" + blob.substr(1) + "'"
                                                             : "another exchange (" + std::to_string(blob.size()) + " bytes)";
  fail(what + ": rank " + std::to_string(team.global_rank(static_cast<int>(r))) + " is not making this call: it made " + theirs +
       " of team " + team.name() + " at this point; every member must make the same calls on a team in the same order");
}

std::vector<std::string> Team::require_same(const std::string& mine, const std::string& what, const std::string& refusal,
                                            const std::string& fact, const std::string& hint) const {
  // '!' + refusal, or '=' + fact + '\n' + fields.
  auto all = all_gather(refusal.empty() ? "=" + fact + "\n" + mine : "!" + refusal, what + " agreement");
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty() || (all[r][0] != '!' && (all[r][0] != '=' || all[r].find('\n') == std::string::npos)))
      fail_other_exchange(*this, what, r, all[r]);
    if (all[r][0] == '!') {
      std::string why = all[r].substr(1);
      if (why.rfind("[symmem rank ", 0) == 0 && why.find("] ") != std::string::npos) why = why.substr(why.find("] ") + 2);
      fail(what + ": rank " + std::to_string(global_rank(static_cast<int>(r))) + " refused: " + why);
    }
  }
  std::vector<std::string> facts(all.size());
  for (size_t r = 0; r < all.size(); ++r) {
    const size_t nl = all[r].find('\n');
    facts[r] = all[r].substr(1, nl - 1);
    const std::string theirs = all[r].substr(nl + 1);
    if (theirs != mine)
      fail(what + ": arguments differ across ranks (" + detail::differing_fields(mine, theirs) + "): this rank has '" + mine + "', rank " +
           std::to_string(global_rank(static_cast<int>(r))) + " has '" + theirs + "'" + hint);
  }
  return facts;
}

namespace detail {
std::vector<int> split_members(const std::vector<std::pair<int, int>>& color_key, int me) {
  std::vector<int> out;
  if (color_key.at(me).first < 0) return out;
  for (int i = 0; i < static_cast<int>(color_key.size()); ++i)
    if (color_key[i].first == color_key[me].first) out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return color_key[a].second < color_key[b].second; });
  return out;
}

std::string host_identity() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string boot_id;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, boot_id);
  return std::string(host) + "/" + boot_id;
}
}  // namespace detail

Team Team::split(int color, int key) const {
  check_valid(state_.get());
  std::string mine(9, 'S');
  std::memcpy(mine.data() + 1, &color, 4);
  std::memcpy(mine.data() + 5, &key, 4);
  std::string base = next_key();  // same on every member: names the children
  auto all = state_->boot->all_gather(base, state_->ranks, mine, "Team::split (team " + state_->name + ")");
  std::vector<std::pair<int, int>> ck(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].size() != 9 || all[i][0] != 'S') fail_other_exchange(*this, "Team::split", i, all[i]);
    std::memcpy(&ck[i].first, all[i].data() + 1, 4);
    std::memcpy(&ck[i].second, all[i].data() + 5, 4);
  }
  auto members = detail::split_members(ck, state_->me);
  if (members.empty()) return Team();
  auto s = std::make_shared<State>();
  s->boot = state_->boot;
  for (int m : members) {
    if (m == state_->me) s->me = static_cast<int>(s->ranks.size());
    s->ranks.push_back(state_->ranks[m]);
  }
  s->name = base + ".c" + std::to_string(color);
  return Team(s);
}

Team Team::host_team() const {
  check_valid(state_.get());
  std::string base = next_key();
  auto all = state_->boot->all_gather(base, state_->ranks, "H" + detail::host_identity(), "Team::host_team (team " + state_->name + ")");
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].empty() || all[i][0] != 'H') fail_other_exchange(*this, "Team::host_team", i, all[i]);
  auto s = std::make_shared<State>();
  s->boot = state_->boot;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] != all[state_->me]) continue;
    if (static_cast<int>(i) == state_->me) s->me = static_cast<int>(s->ranks.size());
    s->ranks.push_back(state_->ranks[i]);
  }
  // Hosts are told apart by the lowest global rank on each, which every member computes alike.
  s->name = base + ".host" + std::to_string(s->ranks.front());
  return Team(s);
}

}  // namespace symmem
