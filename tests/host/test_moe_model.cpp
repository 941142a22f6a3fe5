// A model of MoE dispatch/combine flow control (src/moe/moe_kernels.hpp), under random
// interleavings of the ranks' steps. Operation k uses parity k & 1 of two areas on every rank:
// staging (written by dispatch senders, read by the owner's dispatch receive and, for its routing
// records, by its combine send) and landing (written by combine senders, read by the owner's
// combine receive). A write into an area whose previous contents the owner has not finished with is
// a violation. With a flag to every peer at every step (rule (R)) there must be none, for any team
// size and any mix of full operations and dispatch-only ones; flags only to the ranks that got rows
// must produce one.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

enum Step { kDispatchSend, kDispatchRecv, kCombineSend, kCombineRecv, kDone };

struct RankState {
  int op = 0;     // index of the running operation
  Step step = kDispatchSend;
};

struct Model {
  int n;
  bool flags_to_all;
  std::vector<bool> with_combine;  // per operation: dispatch + combine, or dispatch alone
  // Per rank, parity and source: the operation whose data is in that area and not yet finished
  // with by its owner (-1: free).
  std::vector<std::vector<std::vector<int>>> stage, landing;
  // Flags: dispatch_flag[t][s] = the highest operation of s whose dispatch flag reached t (same for combine).
  std::vector<std::vector<int>> dflag, cflag;
  std::vector<RankState> ranks;
  std::mt19937_64 g;

  Model(int n_, bool all, std::vector<bool> ops, uint64_t seed)
      : n(n_), flags_to_all(all), with_combine(std::move(ops)),
        stage(n_, std::vector<std::vector<int>>(2, std::vector<int>(n_, -1))),
        landing(n_, std::vector<std::vector<int>>(2, std::vector<int>(n_, -1))),
        dflag(n_, std::vector<int>(n_, -1)), cflag(n_, std::vector<int>(n_, -1)), ranks(n_), g(seed) {}

  // Whether rank s sends rows to rank d in operation k (random routing; a rank may send to nobody).
  bool sends(int k, int s, int d) const { return ((k * 131 + s * 31 + d * 7) % 5) != 0 || s == d; }

  // Tries one step of rank r; returns false if it must wait. Sets *violation on an overwrite.
  bool step(int r, bool* violation) {
    RankState& st = ranks[r];
    const int k = st.op, par = k & 1;
    switch (st.step) {
      case kDispatchSend:
        for (int d = 0; d < n; ++d) {
          if (d == r) continue;
          const bool rows = sends(k, r, d);
          if (rows) {
            if (stage[d][par][r] != -1) *violation = true;
            stage[d][par][r] = k;
          }
          if (rows || flags_to_all) dflag[d][r] = k;
        }
        st.step = kDispatchRecv;
        return true;
      case kDispatchRecv:
        for (int s = 0; s < n; ++s)
          if (s != r && (flags_to_all || sends(k, s, r)) && dflag[r][s] < k) return false;
        if (!with_combine[k])
          for (int s = 0; s < n; ++s) stage[r][par][s] = -1;  // nothing reads the records later
        st.step = with_combine[k] ? kCombineSend : kDone;
        break;
      case kCombineSend:
        for (int d = 0; d < n; ++d) {
          if (d == r) continue;
          const bool rows = sends(k, d, r);  // rows of d were staged here: partials go back
          if (rows) {
            if (landing[d][par][r] != -1) *violation = true;
            landing[d][par][r] = k;
          }
          if (rows || flags_to_all) cflag[d][r] = k;
        }
        for (int s = 0; s < n; ++s) stage[r][par][s] = -1;  // the routing records are read
        st.step = kCombineRecv;
        return true;
      case kCombineRecv:
        for (int s = 0; s < n; ++s)
          if (s != r && (flags_to_all || sends(k, r, s)) && cflag[r][s] < k) return false;
        for (int s = 0; s < n; ++s) landing[r][par][s] = -1;
        st.step = kDone;
        break;
      case kDone:
        break;
    }
    if (st.step == kDone) {
      ++st.op;
      st.step = kDispatchSend;
    }
    return true;
  }

  // Runs to the end (or a deadlock); returns true on a violation.
  bool run() {
    bool violation = false;
    const int total = static_cast<int>(with_combine.size());
    for (int guard = 0; guard < 2000000 && !violation; ++guard) {
      std::vector<int> live;
      for (int r = 0; r < n; ++r)
        if (ranks[r].op < total) live.push_back(r);
      if (live.empty()) return false;
      // Try ranks in a random order until one can move.
      std::shuffle(live.begin(), live.end(), g);
      bool moved = false;
      for (int r : live)
        if (step(r, &violation)) { moved = true; break; }
      if (!moved) return false;  // every rank waits: a deadlock (not what this model looks for)
    }
    return violation;
  }
};

std::vector<bool> random_ops(int count, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<bool> ops(count);
  for (auto&& o : ops) o = g() % 4 != 0;  // mostly full operations, some dispatch-only
  return ops;
}

}  // namespace

TEST(MoeModel, FlagsToEveryPeerNeverOverwrite) {
  for (int n = 2; n <= 8; ++n)
    for (uint64_t seed = 0; seed < 300; ++seed) {
      Model m(n, true, random_ops(24, seed), seed * 977 + n);
      ASSERT_FALSE(m.run()) << "overwrite at " << n << " ranks, seed " << seed;
    }
}

TEST(MoeModel, FlagsOnlyWhereRowsWentDoOverwrite) {
  bool found = false;
  for (int n = 3; n <= 8 && !found; ++n)
    for (uint64_t seed = 0; seed < 300 && !found; ++seed) {
      Model m(n, false, random_ops(24, seed), seed * 977 + n);
      found = m.run();
    }
  EXPECT_TRUE(found) << "the model should catch a rank running two operations ahead without rule (R)";
}
