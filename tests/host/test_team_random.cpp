// Team exchanges in a random order on worlds of 2 to 5 forked ranks, where at some steps one
// member makes another call than the rest (a barrier beside an agreement, a split beside a host
// team...) or the same call with other arguments (fields that differ, a refusal, a color of its
// own, another barrier's name). Every rank predicts, from the draws all ranks share, what each call
// of the step must do on it: pass (and give which team), or raise naming the member and what it
// made; and checks that the ranks stay in step: every call spends one exchange of the team whether
// it passed or raised, so the next step's exchanges meet. Teams made by the splits are kept and
// used between the world's steps, their exchanges interleaved with the world's.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>

#include "fork_ranks.hpp"
#include "memory_store.hpp"
#include "symmem/error.hpp"
#include "symmem/team.hpp"

using namespace symmem;

namespace {

enum Kind { kBarrier, kAgreement, kSplit, kHostTeam, kGather, kKinds };
const char* const kKindName[] = {"barrier", "agreement", "split", "host team", "plain gather"};

// One step's draws; made alike on every rank (every draw is taken whatever it is used for).
struct Step {
  Kind common, other;  // what the members make; what the deviant makes
  int deviant;         // the member that differs, or -1
  int how;             // with the same kind: 0 alike, 1 other fields (agreement) / own color (split), 2 a refusal
  int colors, key_mul; // the split's colors and keys
  int use_kept;        // a kept team to gather on after the step, or -1
};

Step draw(std::mt19937_64& rng, int world, int kept) {
  Step s;
  s.common = static_cast<Kind>(rng() % kKinds);
  const Kind other = static_cast<Kind>(rng() % kKinds);
  s.other = rng() % 2 == 0 ? s.common : other;  // half the deviants make the same call, with other arguments
  const int d = static_cast<int>(rng() % world);
  s.deviant = rng() % 2 == 0 ? d : -1;
  s.how = static_cast<int>(rng() % 3);
  s.colors = 1 + static_cast<int>(rng() % 3);
  s.key_mul = static_cast<int>(rng() % 5);
  const int k = kept > 0 ? static_cast<int>(rng() % kept) : -1;
  s.use_kept = rng() % 2 == 0 ? k : -1;
  return s;
}

Kind kind_of(const Step& s, int q) { return q == s.deviant ? s.other : s.common; }
int color_of(const Step& s, int q, int step) {
  if (q == s.deviant && s.other == kSplit && s.common == kSplit && s.how == 1) return q % 2 == 0 ? -1 : 7;  // out of it, or alone
  return (q + step) % s.colors;
}
int key_of(const Step& s, int q, int world) { return (q * s.key_mul) % world - q % 2; }

// Member q's agreement at this step: its fields, its refusal ("" if none) and its fact, and the
// blob the library makes of them ('!' + refusal, or '=' + fact + '\n' + fields).
std::string agreement_fields(const Step& s, int q) { return std::string("a=1 b=") + (q == s.deviant && s.how == 1 ? "3" : "2"); }
std::string agreement_refusal(const Step& s, int q, int step) {
  return q == s.deviant && s.how == 2 ? "a refusal of step " + std::to_string(step) : "";
}
std::string agreement_fact(int q) { return std::to_string(100 + q); }
std::string agreement_blob(const Step& s, int q, int step) {
  const std::string refusal = agreement_refusal(s, q, step);
  return refusal.empty() ? "=" + agreement_fact(q) + "\n" + agreement_fields(s, q) : "!" + refusal;
}

// The bytes of what member q made at this step, as the library writes them, for "another exchange (N bytes)".
std::string what_it_made(const Step& s, int q, int step, size_t host_bytes) {
  switch (kind_of(s, q)) {
    case kBarrier: return "the barrier 'step " + std::to_string(step) + (q == s.deviant ? " elsewhere" : "") + "'";
    case kSplit: return "another exchange (9 bytes)";
    case kHostTeam: return "another exchange (" + std::to_string(host_bytes) + " bytes)";
    case kGather: return "another exchange (" + std::to_string(("g" + std::to_string(q)).size()) + " bytes)";
    default: return "another exchange (" + std::to_string(agreement_blob(s, q, step).size()) + " bytes)";
  }
}

// What the call of rank `me` must raise at this step ("" where it must pass).
std::string expected_error(const Step& s, int me, int world, int step, size_t host_bytes) {
  const Kind mine = kind_of(s, me);
  if (mine == kBarrier || mine == kGather) return "";
  const char* what = mine == kAgreement ? "op" : mine == kSplit ? "Team::split" : "Team::host_team";
  for (int q = 0; q < world; ++q) {
    if (kind_of(s, q) != mine)
      return std::string(what) + ": rank " + std::to_string(q) + " is not making this call: it made " + what_it_made(s, q, step, host_bytes) +
             " of team world at this point";
    if (mine == kAgreement && !agreement_refusal(s, q, step).empty()) return "op: rank " + std::to_string(q) + " refused: " + agreement_refusal(s, q, step);
  }
  if (mine == kAgreement && s.deviant >= 0 && s.how == 1) return "op: arguments differ across ranks (b)";
  return "";
}

// The global ranks of my split's team at this step, in team order (empty: none).
std::vector<int> expected_members(const Step& s, int me, int world, int step) {
  std::vector<int> out;
  const int c = color_of(s, me, step);
  if (c < 0) return out;
  for (int q = 0; q < world; ++q)
    if (color_of(s, q, step) == c) out.push_back(q);
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return key_of(s, a, world) < key_of(s, b, world); });
  return out;
}

std::string join(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

// Each member's global rank, gathered over `t`, must be its members in order.
std::string check_gather(const Team& t, const char* what) {
  const auto got = t.all_gather(std::to_string(t.global_rank(t.rank())), what);
  std::vector<int> ranks;
  for (const auto& g : got) ranks.push_back(std::stoi(g));
  return ranks == t.global_ranks() ? "" : std::string(what) + " on " + t.name() + " gave " + join(ranks) + ", not " + join(t.global_ranks());
}

// One rank's `steps` steps over `boot`: "ok ..." with what ran, or what went wrong.
std::string run_rank(const std::shared_ptr<Bootstrap>& boot, int me, int world, int steps, uint64_t seed) {
  Team w = Team::world(boot);
  const size_t host_bytes = 1 + detail::host_identity().size();
  std::mt19937_64 rng(seed);
  std::vector<Team> kept;  // one per split that passed (invalid where this rank was left out)
  int passed = 0, other_call = 0, refused = 0, differ = 0, gathers = 0;
  for (int step = 0; step < steps; ++step) {
    const Step s = draw(rng, world, static_cast<int>(kept.size()));
    const std::string want = expected_error(s, me, world, step, host_bytes);
    const Kind mine = kind_of(s, me);
    const std::string at = "step " + std::to_string(step) + " (" + kKindName[mine] + ", deviant " + std::to_string(s.deviant) + " making a " +
                           kKindName[s.other] + ", how " + std::to_string(s.how) + "): ";
    std::string got;
    Team made;
    std::vector<std::string> facts;
    try {
      switch (mine) {
        case kBarrier: w.barrier("step " + std::to_string(step) + (me == s.deviant ? " elsewhere" : "")); break;
        case kGather: w.all_gather("g" + std::to_string(me), "a plain gather"); break;
        case kHostTeam: made = w.host_team(); break;
        case kSplit: made = w.split(color_of(s, me, step), key_of(s, me, world)); break;
        case kAgreement: facts = w.require_same(agreement_fields(s, me), "op", agreement_refusal(s, me, step), agreement_fact(me)); break;
        default: break;
      }
    } catch (const Error& e) {
      got = e.what();
    }
    if (want.empty() != got.empty() || (!want.empty() && got.find(want) == std::string::npos))
      return at + "want '" + (want.empty() ? "no error" : want) + "', got '" + (got.empty() ? "no error" : got) + "'";
    if (got.empty()) ++passed;
    else ++(want.find("is not making this call") != std::string::npos ? other_call : want.find("refused") != std::string::npos ? refused : differ);
    if (got.empty() && mine == kAgreement)
      for (int q = 0; q < world; ++q)
        if (facts[q] != agreement_fact(q)) return at + "fact of rank " + std::to_string(q) + " is '" + facts[q] + "'";
    if (got.empty() && mine == kHostTeam && (made.size() != world || made.rank() != me)) return at + "a host team of " + std::to_string(made.size());
    if (mine == kSplit && got.empty()) {
      const auto members = expected_members(s, me, world, step);
      if (members.empty() != !made.valid() || (made.valid() && made.global_ranks() != members))
        return at + "split gave " + (made.valid() ? join(made.global_ranks()) : "none") + ", want " + (members.empty() ? "none" : join(members));
      if (made.valid()) {
        const std::string bad = check_gather(made, "the new team's first gather");
        if (!bad.empty()) return at + bad;
      }
      kept.push_back(made);
    }
    // A team kept from an earlier split: a gather on it, between the world's exchanges.
    if (s.use_kept >= 0 && kept[s.use_kept].valid()) {
      const std::string bad = check_gather(kept[s.use_kept], "a kept team's gather");
      if (!bad.empty()) return at + bad;
      ++gathers;
    }
  }
  // Still in step: a barrier and an agreement on the world, a barrier on each kept team.
  w.barrier("the end");
  w.require_same("a=1", "the last agreement");
  for (const Team& t : kept)
    if (t.valid()) t.barrier("the end");
  return "ok: " + std::to_string(passed) + " calls passed, " + std::to_string(other_call) + " raised naming another call, " +
         std::to_string(refused) + " a refusal, " + std::to_string(differ) + " fields that differ; " + std::to_string(kept.size()) +
         " splits kept, " + std::to_string(gathers) + " gathers on kept teams";
}

// Every rank's report, the ranks forked, over the job's own store.
std::vector<std::string> run_forked(int world, int steps, uint64_t seed) {
  const int port = test::free_port();
  std::vector<std::string> out;
  for (const auto& r : test::run_ranks(world, [&](int me) {
         return run_rank(std::make_shared<Bootstrap>(test::config(me, world, port)), me, world, steps, seed);
       }))
    out.push_back(r.message);
  return out;
}

// Every rank's report, the ranks as threads over an external store (as symmem.init over torch's),
// and the store's own verdict: each team's used keys must be gone but for its last exchange's, one
// a member ("" where they are; else the keys two exchanges of one team left for one rank).
std::vector<std::string> run_over_external_store(int world, int steps, uint64_t seed, std::string* store_verdict) {
  auto store = std::make_shared<test::MemoryStore>();
  std::vector<std::string> out(world);
  const auto errors =
      test::on_threads(store, world, "rt/", [&](const std::shared_ptr<Bootstrap>& b, int me) { out[me] = run_rank(b, me, world, steps, seed); });
  for (int r = 0; r < world; ++r)
    if (!errors[r].empty()) out[r] = errors[r];
  std::map<std::string, std::string> last;  // "<team>/<rank>" -> its key
  store_verdict->clear();
  for (const std::string& k : store->keys()) {  // "rt/<team>#<n>/<rank>"
    const size_t hash = k.rfind('#'), slash = k.rfind('/');
    if (hash == std::string::npos || slash == std::string::npos || slash < hash) continue;
    std::string& seen = last[k.substr(0, hash) + k.substr(slash)];
    if (!seen.empty()) *store_verdict += seen + " and " + k + "; ";
    seen = k;
  }
  if (store->removed_unknown()) *store_verdict += "a key was removed twice or before it was set";
  return out;
}

}  // namespace

TEST(Team, RandomExchangesWhereAMemberMakesAnotherCallStayInStep) {
  for (int world : {2, 3, 4, 5}) {
    const auto res = run_forked(world, 100, 0x7ea3 + world);
    ASSERT_EQ(static_cast<int>(res.size()), world);
    for (int r = 0; r < world; ++r) EXPECT_EQ(res[r].rfind("ok: ", 0), 0u) << "world of " << world << ", rank " << r << ": " << res[r];
    std::printf("random team exchanges, world of %d: rank 0 %s\n", world, res[0].c_str());
  }
}

// The same over an external store: the verdicts alike, and the used keys gone (a call that raised
// still completed its exchange, so its keys go too).
TEST(Team, RandomExchangesOverAnExternalStoreLeaveOnlyEachTeamsLastKeys) {
  for (int world : {2, 3, 5}) {
    std::string store_verdict;
    const auto res = run_over_external_store(world, 100, 0x51a7 + world, &store_verdict);
    for (int r = 0; r < world; ++r) EXPECT_EQ(res[r].rfind("ok: ", 0), 0u) << "world of " << world << ", rank " << r << ": " << res[r];
    EXPECT_EQ(store_verdict, "") << "world of " << world;
    std::printf("random team exchanges over an external store, world of %d: rank 0 %s\n", world, res[0].c_str());
  }
}
