#include <gtest/gtest.h>

#include <functional>

#include "fork_ranks.hpp"
#include "symmem/error.hpp"
#include "symmem/context.hpp"
#include "symmem/team.hpp"

using namespace symmem;

TEST(TeamMath, SplitMembersOrdersByKeyThenRank) {
  std::vector<std::pair<int, int>> ck = {{0, 5}, {1, 0}, {0, 1}, {1, 0}, {-1, 0}, {0, 1}};
  EXPECT_EQ(detail::split_members(ck, 0), (std::vector<int>{2, 5, 0}));
  EXPECT_EQ(detail::split_members(ck, 3), (std::vector<int>{1, 3}));
  EXPECT_TRUE(detail::split_members(ck, 4).empty());
}

TEST(Team, WorldSplitAndHostTeam) {
  int port = test::free_port();
  auto res = test::run_ranks(4, [&](int r) {
    auto boot = std::make_shared<Bootstrap>(test::config(r, 4, port));
    Team world = Team::world(boot);
    if (world.size() != 4 || world.rank() != r) return std::string("bad world");
    Team odd_even = world.split(r % 2, -r);  // reversed order by key
    if (odd_even.size() != 2) return std::string("bad split size");
    int expect_rank = r < 2 ? 1 : 0;
    if (odd_even.rank() != expect_rank) return "bad split rank " + std::to_string(odd_even.rank());
    auto v = odd_even.all_gather(std::to_string(r), "test");
    if (v[expect_rank] != std::to_string(r)) return std::string("bad split gather");
    Team none = world.split(r == 3 ? -1 : 0, 0);
    if ((r == 3) == none.valid()) return std::string("bad negative color");
    if (none.valid() && none.size() != 3) return std::string("bad 3-split");
    Team host = world.host_team();
    if (host.size() != 4 || host.rank() != r) return std::string("bad host team");
    odd_even.barrier("test barrier");
    world.barrier("test barrier");
    return std::string("ok");
  });
  for (int r = 0; r < 4; ++r) EXPECT_EQ(res[r].message, "ok") << "rank " << r;
}

// Team::require_same (SYMMEM_DEBUG_CHECKS, the constructors' agreements): every member raises the
// same verdict, naming the fields that differ, or the member that refused and its reason; and each
// member's fact comes back to all, uncompared.
TEST(Team, RequireSameNamesTheFieldOrTheRefusingRank) {
  int port = test::free_port();
  auto res = test::run_ranks(3, [&](int r) {
    auto boot = std::make_shared<Bootstrap>(test::config(r, 3, port));
    Team world = Team::world(boot);
    auto raised = [](const std::function<void()>& call) -> std::string {  // what the call raised, or ""
      try {
        call();
      } catch (const InvalidArgument& e) {
        return e.what();
      }
      return "";
    };
    auto verdict = [&](const std::string& mine, const std::string& refusal) {
      return raised([&] { world.require_same(mine, "op", refusal); });
    };
    if (!verdict("a=1 b=2", "").empty()) return std::string("alike arguments refused");
    std::string v = verdict(r == 2 ? "a=1 b=3" : "a=1 b=2", "");
    if (v.find("op: arguments differ across ranks (b)") == std::string::npos) return "unlike: " + v;
    v = verdict("a=1", r == 1 ? "[symmem rank 1] x is null" : "");
    if (v.find("op: rank 1 refused: x is null") == std::string::npos) return "refusal: " + v;
    // Facts travel beside the fields, uncompared; a hint follows the difference.
    const auto facts = world.require_same("a=1", "op", "", std::to_string(10 + r));
    if (facts != std::vector<std::string>{"10", "11", "12"}) return std::string("facts");
    try {
      world.require_same(r == 0 ? "a=2" : "a=1", "op", "", "", "; set a alike");
      return std::string("unlike fields passed");
    } catch (const InvalidArgument& e) {
      if (std::string(e.what()).find("(a): this rank has") == std::string::npos ||
          std::string(e.what()).find("'; set a alike") == std::string::npos)
        return "hint: " + std::string(e.what());
    }
    // A member that makes another exchange at this point (here a barrier, or a plain gather) is
    // named, with what it made, by the members in the agreement; it passes its own exchange.
    if (r == 2) {
      world.barrier("somewhere else");
    } else {
      v = verdict("a=1", "");
      if (v.find("op: rank 2 is not making this call: it made the barrier 'somewhere else' of team world") == std::string::npos)
        return "a member at a barrier: " + v;
    }
    if (r == 1) {
      world.all_gather("xyz", "a plain gather");
    } else {
      v = verdict("a=1", "");
      if (v.find("op: rank 1 is not making this call: it made another exchange (3 bytes)") == std::string::npos)
        return "a member at a gather: " + v;
    }
    // So does a split or a host team (here a member at a barrier, then one at an agreement).
    if (r == 0) {
      world.barrier("before the split");
    } else {
      v = raised([&] { world.split(0, r); });
      if (v.find("Team::split: rank 0 is not making this call: it made the barrier 'before the split'") == std::string::npos)
        return "a split beside a barrier: " + v;
    }
    if (r == 1) {
      v = verdict("a=1", "");
      if (v.find("op: rank 0 is not making this call: it made another exchange") == std::string::npos)
        return "an agreement beside a host team: " + v;
    } else {
      v = raised([&] { world.host_team(); });
      if (v.find("Team::host_team: rank 1 is not making this call: it made another exchange") == std::string::npos)
        return "a host team beside an agreement: " + v;
    }
    world.barrier("after the verdicts");
    return std::string("ok");
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(res[r].message, "ok") << "rank " << r;
}

// Makes a Context on each of 3 forked ranks (each GPU 0 after `setup` changed its config or
// environment) and returns each rank's verdict: "refused" where its error holds `want` and, on the
// ranks other than `bad`, names `bad` as the rank that refused; "unsupported" where it saw no GPU
// (CI); else what went wrong.
static std::vector<std::string> context_verdicts(int bad, const std::string& want,
                                                 const std::function<void(int, BootstrapConfig&)>& setup) {
  int port = test::free_port();
  auto res = test::run_ranks(3, [&](int r) {
    BootstrapConfig cfg = test::config(r, 3, port);
    cfg.device = 0;
    setup(r, cfg);
    try {
      Context c(std::make_shared<Bootstrap>(cfg));
      return std::string("constructed");
    } catch (const Unsupported&) {
      return std::string("unsupported");
    } catch (const Error& e) {
      const std::string m = e.what();
      if (m.find(want) == std::string::npos) return "unexpected: " + m;
      const std::string named = "symmem::Context: rank " + std::to_string(bad) + " refused: ";
      if (r != bad && m.find(named) == std::string::npos) return "does not name rank " + std::to_string(bad) + ": " + m;
      return std::string("refused");
    }
  });
  std::vector<std::string> out;
  for (const auto& x : res) out.push_back(x.message);
  return out;
}

// A rank that cannot take its GPU (here rank 2, told to use GPU 1000) fails every rank's Context at
// once, the others naming it, instead of leaving them to wait for it in their first exchange. Where
// no GPU is visible (CI) every rank refuses alike, each with its own Unsupported.
TEST(Context, ARankThatCannotTakeItsGpuFailsEveryRank) {
  const auto v = context_verdicts(2, "maps to GPU 1000", [](int r, BootstrapConfig& cfg) {
    if (r == 2) cfg.device = 1000;
  });
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(v[r] == "unsupported" || v[r] == "refused") << "rank " << r << ": " << v[r];
}

// A setting one rank cannot read (SYMMEM_TIMEOUT_MS=soon on rank 1) is refused inside the same
// start-up agreement: that rank raises its own error naming the setting (before it looks for a
// GPU), the others either name rank 1 (where they could take their GPU) or refuse with their own
// Unsupported (no GPU: CI).
TEST(Context, ASettingOneRankCannotReadFailsEveryRank) {
  const auto v = context_verdicts(1, "SYMMEM_TIMEOUT_MS='soon' is not an integer", [](int r, BootstrapConfig&) {
    if (r == 1) setenv("SYMMEM_TIMEOUT_MS", "soon", 1);
  });
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(v[r] == "refused" || (r != 1 && v[r] == "unsupported")) << "rank " << r << ": " << v[r];
}
