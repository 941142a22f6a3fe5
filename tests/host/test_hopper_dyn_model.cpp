// A model of hopper_gemm_t's dynamic schedule (src/overlap/hopper_gemm_t.cu, the kTPlainDyn
// instantiation: HopperGemmOptions::tile_counter), run to completion under random interleavings
// for any cluster count and unit count: in each cluster of two CTAs, CTA 0's producer takes its
// tiles' units after the first from a global counter a tile ahead and hands each to CTA 1
// through a two-slot ring (ufull / uempty) during the previous tile's loads; each CTA's producer
// fills a ring of 5 stages (a position completes once both CTAs have issued it: each multicasts
// its half of A to both) and writes a tile's unit into its first position, or kEndOfTiles into the
// position after its last tile; two ping-pong consumers a CTA take every other tile, wait for
// their turn (the other consumer's arrival after its k-loop), read the unit at the tile's first
// position, free each position one k-block late on both CTAs' empty barriers, and at kEndOfTiles
// set `ended` and hand the turn on. The cluster that takes a unit past the last counts itself
// out and the last to do so zeroes the counter's words. The consumers' waits are parity waits,
// as the mbarrier's: the model checks that nothing waits for ever, that no wait returns on the
// wrong fill (two fills behind), that every unit is computed once by both CTAs of one cluster,
// and that the counter is zero again at the end. Controls: without the turn handed on at the end
// (a hang), with the counter zeroed by the first cluster out (a unit taken twice or the counter
// left nonzero), with no turn waited for (a wait returns on a fill two behind).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kStages = 5;
constexpr int kEnd = -1;

struct Params {
  int clusters, units, kblocks;
  int control = 0;  // 1: no turn at the end; 2: zeroed by the first out; 3: no turn waited for
};

struct Cta {
  std::vector<int> info;             // a position's unit (kEnd), or -2: not a tile's first position
  std::vector<char> issued, is_end;  // the producer's arrival on a position (an end: no bytes)
  std::vector<char> released;        // this CTA's consumer has freed the position
  // producer
  int pstate = 0, j = 0, u = 0, kb = 0, pos = 0, hand_step = 0, v = 0;
  bool pdone = false;
  // consumers
  struct Consumer {
    int state = 0, j = 0, kb = 0, prev = -1, unit = 0, syncs = 0;
    bool done = false;
  } cons[2];
  int arrivals[2] = {0, 0};  // turn arrivals for consumer 0 / 1
  bool ended = false;
  std::vector<int> computed;
};

struct ClusterState {
  Cta cta[2];
  unsigned ahead = 0;
  int next_u = 0;
  int uslot[2] = {0, 0};
  int ufull[2] = {0, 0}, uempty[2] = {0, 0};  // completed phases
};

struct Sim {
  Params p;
  std::vector<ClusterState> cl;
  unsigned counter = 0, exited = 0;
  int reset_stage = 0;  // the last one out: 1 zeroes the counter next, 2 the exit count
  int resetter = -1;
  std::string error;  // the first thing that went wrong
  void fail(const std::string& why) {
    if (error.empty()) error = why;
  }
  explicit Sim(const Params& pr) : p(pr), cl(pr.clusters) {
    const int cap = (pr.units + 3) * pr.kblocks + 16;  // (one cluster may take every unit)
    for (int c = 0; c < pr.clusters; ++c)
      for (Cta& x : cl[c].cta) {
        x.info.assign(cap, -2);
        x.issued.assign(cap, 0);
        x.is_end.assign(cap, 0);
        x.released.assign(cap, 0);
        x.u = c;
        x.cons[1].j = 1;
      }
  }
  bool completed(const ClusterState& c, int x, int q) const {
    return c.cta[x].issued[q] && (c.cta[x].is_end[q] || c.cta[1 - x].issued[q]);
  }
  int fills(const ClusterState& c, int x, int s) const {  // completed phases of stage s
    int k = 0;
    for (int q = s; q < static_cast<int>(c.cta[x].issued.size()) && completed(c, x, q); q += kStages) ++k;
    return k;
  }
  // The consumer's parity wait for position q: returns as the mbarrier would; a return on a fill
  // other than q's is an error.
  bool full_wait(const ClusterState& c, int x, int q) {
    const int f = q / kStages, k = fills(c, x, q % kStages);
    if ((k & 1) == (f & 1)) return false;
    if (k != f + 1) fail("a consumer's wait for position " + std::to_string(q) + " returned on fill " + std::to_string(k - 1));
    return true;
  }
  bool empty_ok(const ClusterState& c, int q) const { return q < kStages || (c.cta[0].released[q - kStages] && c.cta[1].released[q - kStages]); }
  bool grow(Cta& x, int q) {
    if (q < static_cast<int>(x.info.size())) return true;
    fail("positions past the model's capacity");
    return false;
  }

  // One step of the producer of CTA x of cluster ci; false where it cannot move.
  bool producer(int ci, int x) {
    ClusterState& c = cl[ci];
    Cta& me = c.cta[x];
    if (me.pdone) return false;
    const int hand_at = p.kblocks > 1 ? 1 : 0;
    switch (me.pstate) {
      case 0:  // the start: CTA 0 takes tile 1's unit
        if (x == 0) c.ahead = counter++;
        me.pstate = 1;
        return true;
      case 1:  // the top of tile j
        if (me.j > 0) {
          if (x == 0) {
            me.u = c.next_u;
          } else {
            const int slot = me.j & 1, n = (me.j - 1) >> 1;
            if (c.ufull[slot] < n + 1) return false;
            me.u = c.uslot[slot];
            ++c.uempty[slot];
          }
        }
        me.pstate = me.u >= p.units ? 5 : 2;
        me.kb = 0;
        return true;
      case 2:  // a k-block's loads
        if (!grow(me, me.pos) || !empty_ok(c, me.pos)) return false;
        me.issued[me.pos] = 1;
        if (me.kb == 0) me.info[me.pos] = me.u;
        if (x == 0 && me.kb == hand_at) {
          me.pstate = 3;
          me.hand_step = 0;
          return true;
        }
        [[fallthrough]];
      case 4:  // the next k-block
        ++me.pos;
        if (++me.kb == p.kblocks) {
          ++me.j;
          me.pstate = 1;
        } else {
          me.pstate = 2;
        }
        return true;
      case 3: {  // CTA 0 hands tile j + 1's unit on
        const int jj = me.j + 1, slot = jj & 1, n = (jj - 1) >> 1;
        if (me.hand_step == 0) {
          me.v = static_cast<int>(c.ahead) + p.clusters;
          if (me.v < p.units) {
            if (reset_stage != 0 || resetter >= 0) fail("the counter was taken from after it was zeroed");
            c.ahead = counter++;
          }
          me.hand_step = 1;
          return true;
        }
        if (me.hand_step == 1) {
          if (n > 0 && c.uempty[slot] < n) return false;
          c.uslot[slot] = me.v;
          ++c.ufull[slot];
          c.next_u = me.v;
          me.hand_step = 2;
          return true;
        }
        if (me.v >= p.units) {
          const unsigned old = exited++;
          if ((p.control == 2 && old == 0) || (p.control != 2 && old == static_cast<unsigned>(p.clusters) - 1)) {
            resetter = ci;
            reset_stage = 1;
          }
        }
        me.pstate = 4;
        return true;
      }
      case 5:  // the end marker
        if (!grow(me, me.pos) || !empty_ok(c, me.pos)) return false;
        me.issued[me.pos] = 1;
        me.is_end[me.pos] = 1;
        me.info[me.pos] = kEnd;
        me.pdone = true;
        return true;
    }
    return false;
  }

  // One step of consumer w of CTA x of cluster ci.
  bool consumer(int ci, int x, int w) {
    ClusterState& c = cl[ci];
    Cta& me = c.cta[x];
    Cta::Consumer& k = me.cons[w];
    if (k.done) return false;
    const int p0 = k.j * p.kblocks;
    switch (k.state) {
      case 0:  // the turn
        if (k.j > 0 && p.control != 3) {
          if (me.arrivals[w] < k.syncs + 1) return false;
          ++k.syncs;
        }
        if (me.ended) {
          k.done = true;
          return true;
        }
        k.state = 1;
        return true;
      case 1:  // the tile's first position and its unit
        if (!full_wait(c, x, p0)) return false;
        if (me.info[p0] == kEnd) {
          me.ended = true;
          if (p.control != 1) ++me.arrivals[1 - w];
          k.done = true;
          return true;
        }
        if (me.info[p0] < 0) fail("a tile's first position holds no unit");
        k.unit = me.info[p0];
        k.kb = 0;
        k.prev = -1;
        k.state = 2;
        return true;
      case 2:  // a k-block: wait, then free the previous one
        if (!full_wait(c, x, p0 + k.kb)) return false;
        if (k.prev >= 0) me.released[k.prev] = 1;
        k.prev = p0 + k.kb;
        if (++k.kb == p.kblocks) k.state = 3;
        return true;
      case 3:  // the turn handed on
        ++me.arrivals[1 - w];
        k.state = 4;
        return true;
      case 4:  // the last k-block freed, the tile stored
        me.released[k.prev] = 1;
        me.computed.push_back(k.unit);
        k.j += 2;
        k.state = 0;
        return true;
    }
    return false;
  }

  bool reset_step() {
    if (reset_stage == 1) {
      counter = 0;
      reset_stage = 2;
      return true;
    }
    if (reset_stage == 2) {
      exited = 0;
      reset_stage = 3;
      return true;
    }
    return false;
  }

  bool all_done() const {
    for (const ClusterState& c : cl)
      for (const Cta& x : c.cta)
        if (!x.pdone || !x.cons[0].done || !x.cons[1].done) return false;
    return reset_stage == 0 || reset_stage == 3;
  }

  // Runs to the end under seed's interleaving: "" or what went wrong.
  std::string run(uint64_t seed) {
    std::mt19937_64 g(seed);
    const int actors = p.clusters * 6 + 1;
    std::vector<int> order(actors);
    for (int i = 0; i < actors; ++i) order[i] = i;
    for (long steps = 0; steps < 50000000L; ++steps) {
      if (!error.empty()) return error;
      if (all_done()) break;
      std::shuffle(order.begin(), order.end(), g);
      bool moved = false;
      for (int a : order) {
        if (a == actors - 1) moved = reset_step();
        else if (a % 6 < 2) moved = producer(a / 6, a % 6);
        else moved = consumer(a / 6, (a % 6 - 2) / 2, (a % 6 - 2) % 2);
        if (moved) break;
      }
      if (!moved) return "stuck (nothing can move)";
    }
    if (!error.empty()) return error;
    if (!all_done()) return "did not end";
    std::vector<int> seen(p.units, 0);
    for (const ClusterState& c : cl) {
      if (c.cta[0].computed.size() != c.cta[1].computed.size()) return "a cluster's CTAs computed different tiles";
      std::vector<int> a = c.cta[0].computed, b = c.cta[1].computed;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a != b) return "a cluster's CTAs computed different tiles";
      for (int u : a) {
        if (u < 0 || u >= p.units) return "a unit out of range";
        ++seen[u];
      }
    }
    for (int u = 0; u < p.units; ++u)
      if (seen[u] != 1) return "unit " + std::to_string(u) + " computed " + std::to_string(seen[u]) + " times";
    if (counter != 0 || exited != 0) return "the counter is left at " + std::to_string(counter) + ", " + std::to_string(exited);
    return "";
  }
};

std::string run_model(const Params& pr, uint64_t seed) {
  Sim s(pr);
  return s.run(seed);
}

TEST(HopperDynModel, EveryUnitOnceAndTheCounterZeroForAnyClusterCount) {
  int runs = 0;
  for (int clusters : {1, 2, 3, 5, 8, 17})
    for (int units : {clusters, clusters + 1, 2 * clusters + 3, 5 * clusters + 1, 40})
      for (int kblocks : {1, 2, 3, 6})
        for (uint64_t seed = 1; seed <= 6; ++seed) {
          if (units < clusters) continue;  // (the launch runs min(clusters, units))
          const Params pr{clusters, units, kblocks};
          const std::string why = run_model(pr, seed * 7919 + clusters * 31 + units * 7 + kblocks);
          ASSERT_TRUE(why.empty()) << why << " (" << clusters << " clusters, " << units << " units, " << kblocks << " k-blocks, seed " << seed << ")";
          ++runs;
        }
  EXPECT_GT(runs, 500);
}

TEST(HopperDynModel, ControlsFail) {
  // Each control fails, for its own reason, under some interleaving of some case.
  struct Control {
    int control;
    const char* why;
  };
  for (const Control& ct : {Control{1, "stuck"}, Control{2, "zeroed"}, Control{3, "returned on fill"}}) {
    std::string seen;
    for (int clusters : {1, 2, 3, 5})
      for (int units : {clusters, 2 * clusters + 1, 4 * clusters + 3})
        for (int kblocks : {1, 2, 6})
          for (uint64_t seed = 1; seed <= 20 && seen.find(ct.why) == std::string::npos; ++seed)
            seen = run_model(Params{clusters, units, kblocks, ct.control}, seed * 104729 + ct.control);
    EXPECT_NE(seen.find(ct.why), std::string::npos) << "control " << ct.control << " never failed with \"" << ct.why
                                                    << "\": the model would not catch what it stands for (last: \"" << seen << "\")";
  }
}

}  // namespace
