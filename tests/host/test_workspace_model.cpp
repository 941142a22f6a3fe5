// A model of the sequenced workspace's flow control (include/symmem/device/workspace.hpp), run
// under random interleavings: ranks step through the same sequence of operations, each step one
// message written into a peer's slot of parity e & 1, or one expected message consumed. A write
// into a slot whose previous message has not been consumed is a violation. Rule (R) (every rank
// sends every peer a message and waits for every peer's) must never produce one, for any team size
// and mix of operations; the broadcast that symmem had before (tokens to the root only) must.
// kBroadcast stands for every rooted LL operation (broadcast, reduce, gather, scatter: ll.cu,
// ll_rooted.cu): whichever way the data goes, each rank sends each peer data or a token and waits
// for one from each peer, which is all the model sees.
#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

enum Kind { kAllToAll, kBroadcast, kBroadcastRootTokensOnly };
struct Op {
  Kind kind;
  int root;
};

struct Rank {
  int op = 0;                     // index of the running operation
  std::vector<int> to_send;       // peers still to write to in this operation
  std::vector<int> to_receive;    // peers whose message this operation still waits for
  bool started = false;
};

// Who rank r sends to and waits for in operation `o`.
void plan(const Op& o, int r, int n, std::vector<int>* send, std::vector<int>* recv) {
  send->clear();
  recv->clear();
  for (int p = 0; p < n; ++p) {
    if (p == r) continue;
    if (o.kind == kBroadcastRootTokensOnly && r != o.root) {
      if (p == o.root) send->push_back(p);  // a token to the root only
      if (p == o.root) recv->push_back(p);  // the data from the root only
      continue;
    }
    send->push_back(p);  // data (all-to-all, broadcast root) or a token (broadcast non-root)
    recv->push_back(p);
  }
}

/// Runs one random schedule; returns true if a message was overwritten before it was read.
bool violates(const std::vector<Op>& ops, int n, uint64_t seed) {
  std::mt19937_64 g(seed);
  // unread[t][parity][src]: epoch of a message in t's slot not consumed yet (0: none).
  std::vector<std::vector<std::vector<int>>> unread(n, std::vector<std::vector<int>>(2, std::vector<int>(n, 0)));
  std::vector<Rank> ranks(n);
  const int total = static_cast<int>(ops.size());
  for (int guard = 0; guard < 1000000; ++guard) {
    std::vector<int> runnable;
    for (int r = 0; r < n; ++r)
      if (ranks[r].op < total) runnable.push_back(r);
    if (runnable.empty()) return false;
    const int r = runnable[g() % runnable.size()];
    Rank& k = ranks[r];
    const int e = k.op + 1;  // epochs count from 1
    const int par = e & 1;
    if (!k.started) {
      plan(ops[k.op], r, n, &k.to_send, &k.to_receive);
      k.started = true;
    }
    // One step: a send, or a receive, chosen at random among those possible.
    const bool can_send = !k.to_send.empty();
    bool can_recv = false;
    for (int p : k.to_receive) can_recv |= unread[r][par][p] == e;
    if (can_send && (!can_recv || g() % 2)) {
      const size_t i = g() % k.to_send.size();
      const int t = k.to_send[i];
      k.to_send.erase(k.to_send.begin() + static_cast<long>(i));
      if (unread[t][par][r] != 0) return true;  // overwrote a message its reader has not read
      unread[t][par][r] = e;
    } else if (can_recv) {
      for (size_t i = 0; i < k.to_receive.size(); ++i) {
        const int p = k.to_receive[i];
        if (unread[r][par][p] == e) {
          unread[r][par][p] = 0;
          k.to_receive.erase(k.to_receive.begin() + static_cast<long>(i));
          break;
        }
      }
    }
    if (k.to_send.empty() && k.to_receive.empty()) {  // finished: the next operation may start
      ++k.op;
      k.started = false;
    }
  }
  return false;  // (a deadlock would end here; the protocol has none)
}

std::vector<Op> random_ops(std::mt19937_64& g, int n, int count, bool old_broadcast) {
  std::vector<Op> ops;
  for (int i = 0; i < count; ++i) {
    const int k = static_cast<int>(g() % 3);
    ops.push_back({k == 0 ? kAllToAll : old_broadcast ? kBroadcastRootTokensOnly : kBroadcast, static_cast<int>(g() % n)});
  }
  return ops;
}

}  // namespace

TEST(WorkspaceModel, RuleRNeverOverwritesAnUnreadSlot) {
  std::mt19937_64 g(7);
  for (int n : {2, 3, 4, 5, 8})
    for (int trial = 0; trial < 300; ++trial) {
      const auto ops = random_ops(g, n, 12, false);
      ASSERT_FALSE(violates(ops, n, g())) << n << " ranks, trial " << trial;
    }
}

TEST(WorkspaceModel, RootOnlyTokensOverwriteAtThreeRanks) {
  // all-to-all, broadcast, all-to-all: a non-root finishes the broadcast on the root's data alone
  // and writes the next operation into a slot a slower peer still has to read.
  const std::vector<Op> ops = {{kAllToAll, 0}, {kBroadcastRootTokensOnly, 0}, {kAllToAll, 0}};
  bool found = false;
  for (uint64_t seed = 0; seed < 20000 && !found; ++seed) found = violates(ops, 3, seed);
  EXPECT_TRUE(found) << "the model should find the hazard that the tokens from every rank remove";
  // Two ranks have no third party to overtake: the old scheme was safe there.
  for (uint64_t seed = 0; seed < 2000; ++seed) ASSERT_FALSE(violates(ops, 2, seed));
}

// Who raises the epoch (workspace.cuh, seq_begin / seq_take_ticket / seq_end), under random
// interleavings of the blocks of a sequence of operations with random grid sizes, some of them the
// wrap-cleaning kind, some taking their tickets in seq_begin and some later (all_to_all_v's
// seq_take_ticket, a step of its own here): every block must read the epoch of the previous
// operation (never the raised one), and after each operation the epoch is raised exactly once and
// both counters are back to 0.
TEST(WorkspaceModel, TheLastTicketRaisesTheEpochAfterEveryBlockHasReadIt) {
  std::mt19937 rng(7);
  uint64_t epoch = 0;  // kEpochSlot
  int64_t started = 0, done = 0;  // kStartSlot, kDoneSlot
  for (int op = 1; op <= 4000; ++op) {
    const int grid = 1 + static_cast<int>(rng() % 9);
    const bool cleans = rng() % 7 == 0, late_ticket = rng() % 2 == 0;
    struct Block {
      bool begun = false, ticketed = false, ended = false;
      uint64_t read = 0;
      int64_t ticket = 0;
    };
    std::vector<Block> b(grid);
    int raises = 0, left = (late_ticket ? 3 : 2) * grid;
    while (left > 0) {
      Block& x = b[rng() % grid];
      if (!x.begun) {  // seq_begin: every thread reads the epoch, then one takes a ticket
        x.begun = true;
        x.read = epoch;
        x.ticketed = !late_ticket;
        if (grid > 1 && !late_ticket) x.ticket = started++;
      } else if (!x.ticketed) {  // seq_take_ticket, at any later point before seq_end
        x.ticketed = true;
        if (grid > 1) x.ticket = started++;
      } else if (!x.ended) {  // seq_end
        x.ended = true;
        const uint64_t e = x.read + 1;
        bool raise = false;
        if (cleans) {
          if (grid == 1 || done++ == grid - 1) {
            raise = true;
            if (grid > 1) {
              done = 0;
              started -= grid;
            }
          }
        } else if (grid == 1 || x.ticket == grid - 1) {
          raise = true;
          if (grid > 1) started = 0;
        }
        if (raise) {
          epoch = e;
          ++raises;
        }
      } else {
        continue;
      }
      --left;
    }
    for (const Block& x : b) ASSERT_EQ(x.read, static_cast<uint64_t>(op - 1)) << "operation " << op << ", grid " << grid;
    ASSERT_EQ(raises, 1) << "operation " << op;
    ASSERT_EQ(epoch, static_cast<uint64_t>(op));
    ASSERT_EQ(started, 0);
    ASSERT_EQ(done, 0);
  }
}
