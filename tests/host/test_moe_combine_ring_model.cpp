// A model of the streamed MoE combine's flow control (src/moe/combine_ring.cu) under random
// interleavings. Every rank runs operations back to back; in each, its tokens went to random sets of
// ranks (the dispatch before it). Each rank d holds, per source s, the rows s sent it, in s's token
// order; a partial row for s has a cumulative number Q (over every operation) in d's ring on s, of S
// slots. On every rank, send warps in a pool per destination claim that destination's rows in
// number order, wait until the slot's previous row (Q - S) was released, store the partial and mark
// it ready; sum warps claim the rank's tokens in order, wait until the partial of every rank the
// token went to is ready, sum them and release their slots. A rank's operation ends when its send
// pools and sum warps are done; its next one starts then. The model checks that no interleaving
// gets stuck and that every token sums exactly the partials of its own ranks, each read from the
// slot its sender wrote it to before anything overwrote it; and it shows why pools per
// destination: with one pool serving every destination, some interleavings deadlock.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

struct CombineRingModel {
  int n, S, warps, summers, ops;  // warps: send warps per pool (per destination, or in all if shared)
  bool shared;
  std::mt19937_64 g;
  std::vector<std::vector<std::vector<int>>> plan;  // [rank][op][token]: its ranks (a mask)
  struct SendWarp {
    int dest = -1;  // -1: idle
    int q = 0;
  };
  struct SumWarp {
    int token = -1;
  };
  struct Rank {
    int op = -1;
    std::vector<int> claimed;  // per destination: partial rows claimed this operation
    int next_token = 0, summed = 0;
    std::vector<SendWarp> send;
    std::vector<SumWarp> sum;
  };
  std::vector<Rank> rk;
  // Per (sender, source): cumulative partial rows before this operation, on each side.
  std::vector<std::vector<uint64_t>> csent, crecv;
  // Per (sender, source) ring: the Q each slot holds (-1: none), and the last released Q + 1.
  std::vector<std::vector<std::vector<int64_t>>> slot_q, released;
  std::vector<std::vector<std::vector<int>>> read;  // [sender][source][Q]: times summed

  CombineRingModel(int n_, int S_, int warps_, int summers_, bool shared_, int ops_, int max_tokens, uint64_t seed)
      : n(n_), S(S_), warps(warps_), summers(summers_), ops(ops_), shared(shared_), g(seed), rk(n_) {
    plan.assign(n, std::vector<std::vector<int>>(ops));
    for (int r = 0; r < n; ++r)
      for (int o = 0; o < ops; ++o) {
        const int T = static_cast<int>(g() % (max_tokens + 1));
        for (int t = 0; t < T; ++t) plan[r][o].push_back(static_cast<int>(g() % (1u << n)));  // possibly empty
      }
    csent.assign(n, std::vector<uint64_t>(n, 0));
    crecv.assign(n, std::vector<uint64_t>(n, 0));
    slot_q.assign(n, std::vector<std::vector<int64_t>>(n, std::vector<int64_t>(S, -1)));
    released.assign(n, std::vector<std::vector<int64_t>>(n, std::vector<int64_t>(S, 0)));
    read.assign(n, std::vector<std::vector<int>>(n));
    for (int r = 0; r < n; ++r) {
      rk[r].send.assign(shared ? warps : warps * n, SendWarp{});
      rk[r].sum.assign(summers, SumWarp{});
    }
  }
  // Rows source s sent rank d in operation o (d's partial rows for s), and the number of s's
  // token t among them.
  int rows(int s, int d, int o) const {
    int c = 0;
    for (int m : plan[s][o]) c += (m >> d) & 1;
    return c;
  }
  int q_of(int s, int d, int o, int t) const {
    int c = 0;
    for (int i = 0; i < t; ++i) c += (plan[s][o][i] >> d) & 1;
    return c;
  }
  void start(int r) {
    Rank& R = rk[r];
    ++R.op;
    R.claimed.assign(n, 0);
    R.next_token = 0;
    R.summed = 0;
  }
  bool try_send(int d, int w, bool* bad) {  // rank d's send warp w
    Rank& R = rk[d];
    SendWarp& W = R.send[w];
    if (W.dest < 0) {
      for (int k = 0; k < n; ++k) {
        const int s = shared ? (d + w + k) % n : (d + w) % n;
        if (R.claimed[s] < rows(s, d, R.op)) {
          W.dest = s;
          W.q = R.claimed[s]++;
          return true;
        }
        if (!shared) return false;
      }
      return false;
    }
    const int s = W.dest;
    const uint64_t Q = csent[d][s] + static_cast<uint64_t>(W.q);
    const int k = static_cast<int>(Q % S);
    if (Q >= static_cast<uint64_t>(S) && released[d][s][k] < static_cast<int64_t>(Q - S + 1)) return false;
    if (slot_q[d][s][k] >= 0 && released[d][s][k] != slot_q[d][s][k] + 1) *bad = true;  // overwriting a partial not yet summed
    slot_q[d][s][k] = static_cast<int64_t>(Q);
    W.dest = -1;
    return true;
  }
  bool try_sum(int s, int w) {  // rank s's sum warp w (a partial is read only from the slot that holds it)
    Rank& R = rk[s];
    SumWarp& W = R.sum[w];
    const auto& tokens = plan[s][R.op];
    if (W.token < 0) {
      if (R.next_token >= static_cast<int>(tokens.size())) return false;
      W.token = R.next_token++;
      return true;
    }
    const int t = W.token, m = tokens[t];
    for (int r = 0; r < n; ++r) {  // every partial in
      if (!((m >> r) & 1)) continue;
      const uint64_t Q = crecv[s][r] + static_cast<uint64_t>(q_of(s, r, R.op, t));
      if (slot_q[r][s][Q % S] != static_cast<int64_t>(Q)) return false;
    }
    for (int r = 0; r < n; ++r) {
      if (!((m >> r) & 1)) continue;
      const uint64_t Q = crecv[s][r] + static_cast<uint64_t>(q_of(s, r, R.op, t));
      auto& c = read[r][s];
      if (c.size() <= Q) c.resize(Q + 1, 0);
      ++c[Q];
      released[r][s][Q % S] = static_cast<int64_t>(Q) + 1;
    }
    W.token = -1;
    ++R.summed;
    return true;
  }
  bool try_close(int r) {
    Rank& R = rk[r];
    for (int s = 0; s < n; ++s)
      if (R.claimed[s] < rows(s, r, R.op)) return false;
    for (const auto& w : R.send)
      if (w.dest >= 0) return false;
    if (R.summed < static_cast<int>(plan[r][R.op].size())) return false;
    for (int s = 0; s < n; ++s) {
      csent[r][s] += static_cast<uint64_t>(rows(s, r, R.op));  // partials r sent s
      crecv[r][s] += static_cast<uint64_t>(rows(r, s, R.op));  // partials r received from s
    }
    if (R.op + 1 < ops) start(r);
    else R.op = ops;
    return true;
  }
  bool run(bool* bad) {
    for (int r = 0; r < n; ++r) start(r);
    for (;;) {
      bool all = true;
      for (int r = 0; r < n; ++r) all &= rk[r].op >= ops;
      if (all) return true;
      std::vector<std::pair<int, int>> agents;  // (rank, id): send warps, then sum warps, then close
      for (int r = 0; r < n; ++r) {
        if (rk[r].op >= ops) continue;
        const int total = static_cast<int>(rk[r].send.size()) + summers + 1;
        for (int i = 0; i < total; ++i) agents.emplace_back(r, i);
      }
      std::shuffle(agents.begin(), agents.end(), g);
      bool moved = false;
      for (auto [r, i] : agents) {
        const int sw = static_cast<int>(rk[r].send.size());
        if (i < sw) moved = try_send(r, i, bad);
        else if (i < sw + summers) moved = try_sum(r, i - sw);
        else moved = try_close(r);
        if (moved) break;
      }
      if (!moved) return false;
    }
  }
  // Every partial of every operation summed exactly once.
  bool each_summed_once() const {
    for (int d = 0; d < n; ++d)
      for (int s = 0; s < n; ++s) {
        uint64_t total = 0;
        for (int o = 0; o < ops; ++o) total += static_cast<uint64_t>(rows(s, d, o));
        if (read[d][s].size() != total) return false;
        for (int c : read[d][s])
          if (c != 1) return false;
      }
    return true;
  }
};

TEST(MoeCombineRingModel, PoolsPerDestinationNeverDeadlockAndSumEveryPartialOnce) {
  for (int n : {1, 2, 3, 4, 5})
    for (uint64_t seed = 0; seed < 60; ++seed) {
      CombineRingModel m(n, /*S=*/1 + static_cast<int>(seed % 3), /*warps=*/1 + static_cast<int>(seed % 2), /*summers=*/1 + static_cast<int>(seed % 3),
                         /*shared=*/false, /*ops=*/3, /*max_tokens=*/9, 5000 * n + seed);
      bool bad = false;
      ASSERT_TRUE(m.run(&bad)) << "stuck: n=" << n << " seed=" << seed;
      ASSERT_FALSE(bad) << "a slot rewritten before its partial was summed: n=" << n << " seed=" << seed;
      ASSERT_TRUE(m.each_summed_once()) << "n=" << n << " seed=" << seed;
    }
}

TEST(MoeCombineRingModel, OnePoolForEveryDestinationCanDeadlock) {
  // The same, but a rank's send warps serve every destination: a warp waits for a release from a
  // source whose summers wait for a partial this rank has no warp left to send.
  int stuck = 0;
  for (uint64_t seed = 0; seed < 400 && stuck == 0; ++seed) {
    CombineRingModel m(3, /*S=*/1, /*warps=*/1, /*summers=*/1, /*shared=*/true, /*ops=*/2, /*max_tokens=*/8, 11000 + seed);
    bool bad = false;
    if (!m.run(&bad)) ++stuck;
    ASSERT_FALSE(bad);
  }
  EXPECT_GT(stuck, 0) << "no interleaving deadlocked with one pool; the per-destination pools' reason would need restating";
}

}  // namespace
