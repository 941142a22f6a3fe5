// A model of MoE dispatch/combine flow control (src/moe/moe_kernels.hpp), under random
// interleavings of the ranks' steps. An operation runs R rounds of dispatch (send, receive), then
// R rounds of combine (send, receive). Areas on every rank, each by parity: staging rows (by
// dispatch round: written by senders, read by the owner's receive of the round), routing records
// (by operation: written by the dispatch senders, read until the owner's last combine send) and
// the combine area (by combine round: written by combine senders, read by the owner's receive).
// A write into an area whose previous contents the owner has not finished with is a violation, and
// so is an add into a flag its owner has not yet read and zeroed (the flags count arrivals; the
// receive half of a step zeroes its parity's flags).
// With a flag to every peer at every step (rule (R)) there must be none, for any team size, any
// number of rounds and any mix of full operations and dispatch-only ones; flags only to the ranks
// that got rows must produce one. At one round the senders also claim expert rows on the
// destination (Layout::sender_claims): an add to the owner's expert counters of the operation's
// parity, which the owner publishes and zeroes in its dispatch receive; an add into counters that
// still hold an operation the owner has not published is a violation (with one set of counters
// instead of one a parity, there is one).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

enum Step { kDispatchSend, kDispatchRecv, kCombineSend, kCombineRecv };

struct RankState {
  int op = 0;      // index of the running operation
  Step step = kDispatchSend;
  int round = 0;   // round of the current phase
  int drounds = 0, crounds = 0;  // dispatch and combine rounds this rank has finished (epochs)
};

struct Model {
  int n, rounds;
  bool flags_to_all;
  int counter_sets = 2;  // expert counters by operation parity (1: one set, to show the parity is needed)
  std::vector<bool> with_combine;  // per operation: dispatch + combine, or dispatch alone
  // Per rank, parity and source: the step whose data is in that area and not yet finished with by
  // its owner (-1: free).
  std::vector<std::vector<std::vector<int>>> ring, records, landing;
  // Per rank and counter set: the operation whose claims are in its expert counters, not yet
  // published (-1: none). Senders claim at one round only.
  std::vector<std::vector<int>> counters;
  // dflag[t][s] / cflag[t][s]: the highest dispatch / combine round epoch of s whose flag reached t.
  std::vector<std::vector<int>> dflag, cflag;
  // Per rank, parity and source: the step whose flag count is in that flag slot, not yet zeroed (-1).
  std::vector<std::vector<std::vector<int>>> dslot, cslot;
  std::vector<RankState> ranks;
  std::mt19937_64 g;

  Model(int n_, int rounds_, bool all, std::vector<bool> ops, uint64_t seed)
      : n(n_), rounds(rounds_), flags_to_all(all), with_combine(std::move(ops)),
        ring(n_, std::vector<std::vector<int>>(2, std::vector<int>(n_, -1))),
        records(n_, std::vector<std::vector<int>>(2, std::vector<int>(n_, -1))),
        landing(n_, std::vector<std::vector<int>>(2, std::vector<int>(n_, -1))),
        dflag(n_, std::vector<int>(n_, -1)), cflag(n_, std::vector<int>(n_, -1)),
        dslot(n_, std::vector<std::vector<int>>(2, std::vector<int>(n_, -1))),
        cslot(n_, std::vector<std::vector<int>>(2, std::vector<int>(n_, -1))), counters(n_, std::vector<int>(2, -1)), ranks(n_), g(seed) {}

  // Whether rank s sends rows to rank d in round j of operation k (a rank may send to nobody).
  bool sends(int k, int j, int s, int d) const { return ((k * 131 + j * 17 + s * 31 + d * 7) % 5) != 0; }

  // Tries one step of rank r; returns false if it must wait. Sets *violation on an overwrite.
  bool step(int r, bool* violation) {
    RankState& st = ranks[r];
    const int k = st.op, j = st.round;
    const int de = st.drounds, ce = st.crounds;  // epochs of this step (0-based)
    switch (st.step) {
      case kDispatchSend:
        for (int d = 0; d < n; ++d) {
          if (d == r) continue;
          const bool rows = sends(k, j, r, d);
          if (rows) {
            if (ring[d][de & 1][r] != -1 && ring[d][de & 1][r] != de) *violation = true;
            if (records[d][k & 1][r] != -1 && records[d][k & 1][r] != k) *violation = true;
            ring[d][de & 1][r] = de;
            records[d][k & 1][r] = k;
            if (rounds == 1) {  // the rows' expert claims on d
              int& c = counters[d][k % counter_sets];
              if (c != -1 && c != k) *violation = true;
              c = k;
            }
          }
          if (rows || flags_to_all) {
            if (dslot[d][de & 1][r] != -1) *violation = true;  // the owner has not zeroed step de - 2's count
            dslot[d][de & 1][r] = de;
            dflag[d][r] = de;
          }
        }
        st.step = kDispatchRecv;
        return true;
      case kDispatchRecv:
        for (int s = 0; s < n; ++s)
          if (s != r && (flags_to_all || sends(k, j, s, r)) && dflag[r][s] < de) return false;
        for (int s = 0; s < n; ++s) ring[r][de & 1][s] = -1;  // the round's rows are copied out
        for (int s = 0; s < n; ++s) dslot[r][de & 1][s] = -1;  // and its flags zeroed
        ++st.drounds;
        if (j == rounds - 1) counters[r][k % counter_sets] = -1;  // the counts published and zeroed
        if (++st.round < rounds) {
          st.step = kDispatchSend;
        } else {
          st.round = 0;
          if (!with_combine[k])
            for (int s = 0; s < n; ++s) records[r][k & 1][s] = -1;  // nothing reads the records later
          st.step = with_combine[k] ? kCombineSend : kDispatchSend;
          if (!with_combine[k]) ++st.op;
        }
        return true;
      case kCombineSend:
        for (int d = 0; d < n; ++d) {
          if (d == r) continue;
          const bool rows = sends(k, j, d, r);  // d's rows of round j were staged here: partials go back
          if (rows) {
            if (landing[d][ce & 1][r] != -1) *violation = true;
            landing[d][ce & 1][r] = ce;
          }
          if (rows || flags_to_all) {
            if (cslot[d][ce & 1][r] != -1) *violation = true;
            cslot[d][ce & 1][r] = ce;
            cflag[d][r] = ce;
          }
        }
        if (j == rounds - 1)
          for (int s = 0; s < n; ++s) records[r][k & 1][s] = -1;  // the last round has read the records
        st.step = kCombineRecv;
        return true;
      case kCombineRecv:
        for (int s = 0; s < n; ++s)
          if (s != r && (flags_to_all || sends(k, j, r, s)) && cflag[r][s] < ce) return false;
        for (int s = 0; s < n; ++s) landing[r][ce & 1][s] = -1;
        for (int s = 0; s < n; ++s) cslot[r][ce & 1][s] = -1;
        ++st.crounds;
        if (++st.round < rounds) {
          st.step = kCombineSend;
        } else {
          st.round = 0;
          st.step = kDispatchSend;
          ++st.op;
        }
        return true;
    }
    return true;
  }

  // Runs to the end (or a deadlock); returns true on a violation.
  bool run() {
    bool violation = false;
    const int total = static_cast<int>(with_combine.size());
    for (int guard = 0; guard < 4000000 && !violation; ++guard) {
      std::vector<int> live;
      for (int r = 0; r < n; ++r)
        if (ranks[r].op < total) live.push_back(r);
      if (live.empty()) return false;
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
  for (int rounds : {1, 3})
    for (int n = 2; n <= 8; ++n)
      for (uint64_t seed = 0; seed < 200; ++seed) {
        Model m(n, rounds, true, random_ops(16, seed), seed * 977 + n);
        ASSERT_FALSE(m.run()) << "overwrite at " << n << " ranks, " << rounds << " rounds, seed " << seed;
      }
}

TEST(MoeModel, SenderClaimsWithOneCounterSetCanOverwrite) {
  bool found = false;
  for (int n = 2; n <= 8 && !found; ++n)
    for (uint64_t seed = 0; seed < 300 && !found; ++seed) {
      Model m(n, 1, true, random_ops(24, seed), seed * 977 + n);
      m.counter_sets = 1;
      found = m.run();
    }
  EXPECT_TRUE(found) << "the model should catch a sender's claims of the next operation before the owner published this one";
}

TEST(MoeModel, FlagsOnlyWhereRowsWentDoOverwrite) {
  bool found = false;
  for (int n = 3; n <= 8 && !found; ++n)
    for (uint64_t seed = 0; seed < 300 && !found; ++seed) {
      Model m(n, 1, false, random_ops(24, seed), seed * 977 + n);
      found = m.run();
    }
  EXPECT_TRUE(found) << "the model should catch a rank running two operations ahead without rule (R)";
}

namespace {

// The one-kernel combine's bookkeeping without an election (src/moe/combine.cu, combine_kernel),
// block by block: on every rank, kernel c (a combine round) runs B blocks; each reads the round
// epoch and (`early_base`) its flags' bases at its start, adds its arrival to every rank's flag of
// parity c & 1, waits until every source's flag holds B more arrivals than its base, and block 0
// then writes the bases (the values it saw) and the epoch. A rank's next kernel starts once all
// its blocks are done (stream order). Any interleaving of all ranks' blocks must keep every read
// of the epoch and the bases at the previous round's values and every wait's count at exactly B;
// with the bases read at the wait instead, a block that comes late finds block 0's new bases and
// waits for arrivals that never come. The one-kernel dispatch (src/moe/dispatch.cu, RecvBook) has
// the same steps with its last block as the writer (`writer`), the epoch standing for everything
// read at the start or before the adds (the operation, the totals) and written after the wait.
struct CombineGrids {
  struct Block {
    int pc = 0;
    std::vector<uint64_t> base;
  };
  int n, B, K;
  bool early_base;
  int writer = 0;  // the block that writes the bases and the epoch after its wait
  std::vector<int> round;  // the rank's running kernel, 1-based (K + 1: done)
  std::vector<std::vector<Block>> blocks;
  std::vector<std::vector<std::vector<uint64_t>>> flag, base;  // [rank][parity][source]
  std::vector<int> epoch;
  std::mt19937_64 g;

  CombineGrids(int n_, int B_, int K_, bool early, uint64_t seed)
      : n(n_), B(B_), K(K_), early_base(early), round(n_, 1), blocks(n_, std::vector<Block>(B_)),
        flag(n_, std::vector<std::vector<uint64_t>>(2, std::vector<uint64_t>(n_, 0))),
        base(n_, std::vector<std::vector<uint64_t>>(2, std::vector<uint64_t>(n_, 0))), epoch(n_, 0), g(seed) {}

  // One step of block b of rank r; false if it must wait. Sets *violation on a wrong read.
  bool step(int r, int b, bool* violation) {
    const int c = round[r], par = c & 1;
    Block& k = blocks[r][b];
    switch (k.pc) {
      case 0:  // start: the epoch (and the bases)
        if (epoch[r] != c - 1) *violation = true;
        if (early_base) k.base = base[r][par];
        k.pc = 1;
        return true;
      case 1:  // send share done, fenced: the arrival to every rank
        for (int d = 0; d < n; ++d) flag[d][par][r] += 1;
        k.pc = 2;
        return true;
      case 2: {  // the wait
        const std::vector<uint64_t>& bs = early_base ? k.base : base[r][par];
        for (int s = 0; s < n; ++s)
          if (flag[r][par][s] - bs[s] < static_cast<uint64_t>(B)) return false;
        for (int s = 0; s < n; ++s)
          if (flag[r][par][s] - bs[s] != static_cast<uint64_t>(B)) *violation = true;  // a later round's arrival counted
        if (b == writer) {
          base[r][par] = flag[r][par];
          epoch[r] = c;
        }
        k.pc = 3;
        return true;
      }
    }
    return false;
  }

  // 0: every rank ran K rounds; 1: a violation; 2: a deadlock.
  int run() {
    bool violation = false;
    for (int guard = 0; guard < 1000000; ++guard) {
      std::vector<std::pair<int, int>> live;
      for (int r = 0; r < n; ++r)
        for (int b = 0; round[r] <= K && b < B; ++b)
          if (blocks[r][b].pc < 3) live.emplace_back(r, b);
      if (live.empty()) return 0;
      std::shuffle(live.begin(), live.end(), g);
      bool moved = false;
      for (auto [r, b] : live)
        if (step(r, b, &violation)) {
          moved = true;
          bool all = true;
          for (const Block& k : blocks[r]) all &= k.pc == 3;
          if (all) {  // the grid is complete: the rank's next kernel
            ++round[r];
            blocks[r].assign(B, Block());
          }
          break;
        }
      if (violation) return 1;
      if (!moved) return 2;
    }
    return 2;
  }
};

}  // namespace

TEST(MoeModel, OneKernelCombineNeedsNoElection) {
  for (int n = 2; n <= 8; ++n)
    for (int B : {1, 2, 3, 5})
      for (uint64_t seed = 0; seed < 100; ++seed) {
        CombineGrids m(n, B, 6, true, seed * 7919 + n * 31 + B);
        ASSERT_EQ(m.run(), 0) << n << " ranks, " << B << " blocks, seed " << seed << " (1: a wrong read, 2: a deadlock)";
      }
}

TEST(MoeModel, OneKernelDispatchBooksWithoutAnElection) {
  for (int n = 2; n <= 8; ++n)
    for (int B : {1, 2, 3, 5})
      for (uint64_t seed = 0; seed < 100; ++seed) {
        CombineGrids m(n, B, 6, true, seed * 6007 + n * 37 + B);
        m.writer = B - 1;
        ASSERT_EQ(m.run(), 0) << n << " ranks, " << B << " blocks, seed " << seed << " (1: a wrong read, 2: a deadlock)";
      }
}

TEST(MoeModel, OneKernelCombineBasesReadAtTheWaitCanHang) {
  bool found = false;
  for (int n = 2; n <= 4 && !found; ++n)
    for (uint64_t seed = 0; seed < 200 && !found; ++seed) {
      CombineGrids m(n, 3, 6, false, seed * 7919 + n);
      found = m.run() != 0;
    }
  EXPECT_TRUE(found) << "the model should catch a block reading bases that block 0 already moved";
}
