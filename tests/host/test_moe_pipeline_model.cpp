// A model of MoE flow control with pipelined rounds (src/moe/moe_kernels.hpp), under random
// interleavings of the ranks' steps. A phase (dispatch, then combine) of R rounds runs as
// send(0), then for each round j one kernel: wait for round j's flags, store round j+1's rows into
// the peers (j + 1 < R), finish with round j's rows (the copy or the sum), add this rank's flags of
// round j+1. Flags count arrivals and are never zeroed: a receiver reads a flag's value at its wait
// and keeps it as the base of that slot's next round. One round (decode) runs send, then wait and
// finish. Each rank's areas (staging rows for dispatch, the combine area for combine) are by round
// parity; a store into an area whose previous rows the owner has not finished with is a violation,
// and so is an add to a flag whose previous round the owner has not read yet (its count would mix
// two rounds). The model also checks two broken variants: flags zeroed by the receive election
// (an add of round j+2 may land before the zeroing, which erases it) and the flags of round j+1
// raised before round j's rows are finished with.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

enum class Variant { kCumulative, kZeroed, kEarlyFlags };

struct Step {
  enum Kind { kSend0, kWaitStore, kFinish, kZero } kind;
  int phase;  // 0 dispatch, 1 combine
  int round;  // j within the phase
  int epoch;  // the phase's global round epoch of round j
  int rounds;
};

struct Model {
  int n;
  Variant v;
  // area[phase][owner][parity][src]: the epoch whose rows are there and not finished with (-1: free).
  std::vector<std::vector<std::vector<std::vector<int>>>> area;
  // Flag slot [phase][owner][parity][src]: last epoch added and last epoch read by the owner.
  std::vector<std::vector<std::vector<std::vector<int>>>> added, read;
  std::vector<std::vector<Step>> prog;
  std::vector<size_t> pc;
  std::mt19937_64 g;

  Model(int n_, Variant v_, const std::vector<int>& phase_rounds, uint64_t seed) : n(n_), v(v_), pc(n_, 0), g(seed) {
    auto grid = [&] { return std::vector<std::vector<std::vector<std::vector<int>>>>(
                          2, std::vector<std::vector<std::vector<int>>>(n, std::vector<std::vector<int>>(2, std::vector<int>(n, -1)))); };
    area = grid();
    added = grid();
    read = grid();
    // The same program on every rank: operations of a dispatch and a combine of R rounds each.
    std::vector<Step> p;
    int epoch[2] = {0, 0};
    for (int R : phase_rounds)
      for (int ph = 0; ph < 2; ++ph) {
        p.push_back({Step::kSend0, ph, 0, epoch[ph], R});
        for (int j = 0; j < R; ++j) {
          p.push_back({Step::kWaitStore, ph, j, epoch[ph] + j, R});
          p.push_back({Step::kFinish, ph, j, epoch[ph] + j, R});
          if (v == Variant::kZeroed) p.push_back({Step::kZero, ph, j, epoch[ph] + j, R});
        }
        epoch[ph] += R;
      }
    prog.assign(n, p);
  }

  void store(int ph, int r, int e, bool* bad) {  // rank r's rows of epoch e into every rank's area
    for (int d = 0; d < n; ++d) {
      int& a = area[ph][d][e & 1][r];
      if (a != -1) *bad = true;
      a = e;
    }
  }
  void add_flags(int ph, int r, int e, bool* bad) {
    for (int d = 0; d < n; ++d) {
      if (added[ph][d][e & 1][r] != read[ph][d][e & 1][r]) *bad = true;  // the previous count is unread
      added[ph][d][e & 1][r] = e;
    }
  }

  // Tries rank r's next step; false if it must wait.
  bool step(int r, bool* bad) {
    const Step& s = prog[r][pc[r]];
    const int ph = s.phase, e = s.epoch;
    const bool last = s.round + 1 == s.rounds;
    switch (s.kind) {
      case Step::kSend0:
        store(ph, r, e, bad);
        add_flags(ph, r, e, bad);
        break;
      case Step::kWaitStore:
        for (int q = 0; q < n; ++q)
          if (added[ph][r][e & 1][q] != e) return false;  // round j's count from every rank
        for (int q = 0; q < n; ++q) read[ph][r][e & 1][q] = e;
        if (!last) store(ph, r, e + 1, bad);
        if (!last && v == Variant::kEarlyFlags) add_flags(ph, r, e + 1, bad);
        break;
      case Step::kFinish:
        for (int q = 0; q < n; ++q) area[ph][r][e & 1][q] = -1;  // round j's rows copied out / summed
        if (!last && v != Variant::kEarlyFlags) add_flags(ph, r, e + 1, bad);
        break;
      case Step::kZero:
        for (int q = 0; q < n; ++q) {
          if (added[ph][r][e & 1][q] != e) *bad = true;  // an add of a later round would be erased
          added[ph][r][e & 1][q] = read[ph][r][e & 1][q] = -1;
        }
        break;
    }
    ++pc[r];
    return true;
  }

  // Runs to the end; true on a violation (a deadlock counts as one: nothing may wait forever).
  bool run() {
    bool bad = false;
    while (!bad) {
      std::vector<int> live;
      for (int r = 0; r < n; ++r)
        if (pc[r] < prog[r].size()) live.push_back(r);
      if (live.empty()) return false;
      std::shuffle(live.begin(), live.end(), g);
      bool moved = false;
      for (int r : live)
        if (step(r, &bad)) {
          moved = true;
          break;
        }
      if (!moved) return true;
    }
    return true;
  }
};

std::vector<int> random_rounds(int ops, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<int> rs(ops);
  for (int& r : rs) r = g() % 3 == 0 ? 1 : 1 + static_cast<int>(g() % 5);  // decode-like and prefill-like operations
  return rs;
}

}  // namespace

TEST(MoePipelineModel, CumulativeFlagsNeverOverwriteNorMixRounds) {
  for (int n = 1; n <= 8; ++n)
    for (uint64_t seed = 0; seed < 300; ++seed) {
      Model m(n, Variant::kCumulative, random_rounds(8, seed), seed * 7919 + n);
      ASSERT_FALSE(m.run()) << "violation at " << n << " ranks, seed " << seed;
    }
}

TEST(MoePipelineModel, ZeroedFlagsOrEarlyFlagsBreak) {
  for (Variant v : {Variant::kZeroed, Variant::kEarlyFlags}) {
    bool found = false;
    for (int n = 2; n <= 8 && !found; ++n)
      for (uint64_t seed = 0; seed < 300 && !found; ++seed) {
        Model m(n, v, random_rounds(8, seed), seed * 7919 + n);
        found = m.run();
      }
    EXPECT_TRUE(found) << (v == Variant::kZeroed ? "zeroed flags" : "early flags") << ": the model should find the race";
  }
}
