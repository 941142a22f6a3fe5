// A model of the MoE small-round dispatch through LL lines (src/moe/dispatch_ll.cu), under random
// interleavings: every line a rank sends lands at a random later time, in any order; a rank's
// operation k is a send kernel and a receive kernel beside it (its sends and its reads in any
// order) that end once its reads are done and its lines have landed, and only then do its combine
// of k and then its operation k + 1 start (stream order). A slot (parity, source, row) has line 0
// (written in every operation), a routing line and a row line (written when the source sends that
// row); its owner block reads all three, the publisher block lines 0
// and the routing line. A reader takes a line only when it carries the operation's flag, from a
// period of P flags (kLLFlagMax in the library; small here so that it wraps many times), and the
// two operations before the wrap zero the lines once read. Violations: a reader takes a line
// another operation wrote (a stale flag that matches), a line is overwritten or zeroed before a
// reader that needs it has read it, or no rank can move while operations are left. The protocol
// as built has none for any team size and rows a round; without the zeroing a stale line is taken,
// and a slot's block zeroing the routing lines it has read (instead of the last block) breaks it.
// It also checks the claims without a reset: operation k's rows of an expert take counter -
// base[k mod 4] and come out as 0 .. count - 1.
// The combine after it (src/moe/combine_ll.cu) runs as each rank's second kernel of operation k:
// it sends every rank a header line and each row it received back to the row's source, into the
// source's combine slot (parity, sender, row j), and reads every rank's header and the slots of the
// rows it sent; where k cleans, its last block zeroes the whole area of k's parity. Without that
// zeroing, or zeroing only the slots it read, a stale line is taken.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace {

struct LinesModel {
  enum class Variant { kAsBuilt, kNoZeroing, kOwnerZeroesRouting, kCombineNoZeroing, kCombineZeroesWhatItRead };
  int n, R, P, ops;
  Variant variant;
  std::mt19937_64 g;
  struct Line {
    int flag = 0, op = -1;  // op -1: zero
    int need = 0;           // readers of `op` that have not taken it yet
  };
  // mem[((d * 2 + parity) * n + s) * R + j][line]
  std::vector<std::vector<Line>> mem;
  // The combine's lines: cmem[((d * 2 + parity) * n + sender) * (R + 1) + j], j = R the header.
  std::vector<Line> cmem;
  struct Write {
    int d, par, s, j, l, op;  // l -1: a combine line (s the sender, j its row or R the header)
  };
  std::vector<Write> flight;
  std::vector<std::vector<std::vector<int>>> rows;  // rows[k][s][d]: rows s sends d in operation k (1-based k)
  struct Rank {
    int op = 1;
    bool sent = false, combining = false;
    std::vector<int> owner_stage;   // per slot: 0 line 0, 1 routing, 2 row, 3 done
    std::vector<int> pub_stage;     // per slot: 0 line 0, 1 routing, 2 done
    std::vector<int> comb_read;     // the combine's reads, per (sender r, row j) and header (j = R): 0 pending, 1 taken, -1 none
  };
  std::vector<Rank> ranks;
  std::string violation;
  // Claims without a reset: per rank, parity and expert, the counter; per rank, base[4][expert].
  std::vector<std::vector<unsigned>> counter, base;

  LinesModel(int n_, int R_, int P_, int ops_, Variant v, uint64_t seed)
      : n(n_), R(R_), P(P_), ops(ops_), variant(v), g(seed), mem(static_cast<size_t>(n_) * 2 * n_ * R_, std::vector<Line>(3)),
        cmem(static_cast<size_t>(n_) * 2 * n_ * (R_ + 1)),
        ranks(n_), counter(n_, std::vector<unsigned>(2 * 3, 0)), base(n_, std::vector<unsigned>(4 * 3, 0)) {
    rows.resize(ops + 1);
    for (int k = 1; k <= ops; ++k) {
      rows[k].assign(n, std::vector<int>(n, 0));
      for (int s = 0; s < n; ++s)
        for (int d = 0; d < n; ++d) rows[k][s][d] = static_cast<int>(g() % static_cast<uint64_t>(R + 1));  // 0 .. R: often fewer than R
    }
    for (Rank& r : ranks) start(r);
  }
  int flag_of(int k) const { return (k - 1) % P + 1; }
  bool cleans(int k) const { return flag_of(k) >= P - 1; }
  std::vector<Line>& slot(int d, int par, int s, int j) { return mem[((static_cast<size_t>(d) * 2 + par) * n + s) * R + j]; }
  Line& cline(int d, int par, int s, int j) { return cmem[((static_cast<size_t>(d) * 2 + par) * n + s) * (R + 1) + j]; }
  void start(Rank& r) {
    r.sent = false;
    r.combining = false;
    r.owner_stage.assign(static_cast<size_t>(n) * R, 0);
    r.pub_stage.assign(static_cast<size_t>(n) * R, 0);
  }
  void fail(const std::string& why) {
    if (violation.empty()) violation = why;
  }
  // A local zeroing (within the rank's kernel): a reader that still needs the line never sees it.
  void zero(int d, int par, int s, int j, int l) {
    Line& x = slot(d, par, s, j)[l];
    if (x.need > 0) fail("a line was zeroed before a reader took it (op " + std::to_string(x.op) + ")");
    x = Line{};
  }
  void land(const Write& w) {
    if (w.l < 0) {
      Line& c = cline(w.d, w.par, w.s, w.j);
      if (c.need > 0) fail("combine op " + std::to_string(w.op) + " overwrote a line of op " + std::to_string(c.op) + " before its reader took it");
      c = Line{flag_of(w.op), w.op, 1};
      return;
    }
    Line& x = slot(w.d, w.par, w.s, w.j)[w.l];
    if (x.need > 0) fail("op " + std::to_string(w.op) + " overwrote a line of op " + std::to_string(x.op) + " before its reader took it");
    const bool row = w.j < rows[w.op][w.s][w.d];
    x = Line{flag_of(w.op), w.op, w.l == 2 ? 1 : (w.l == 0 || row ? 2 : 0)};
  }
  // Takes line x for reader op k on rank d (`who`: the dispatch's or the combine's reader), if it
  // carries k's flag.
  bool take_line(Line& x, int d, int k, const char* who) {
    if (x.flag != flag_of(k)) return false;
    if (x.op != k) {
      fail("rank " + std::to_string(d) + who + " took a line of op " + std::to_string(x.op) + " for op " + std::to_string(k));
      return true;
    }
    --x.need;
    return true;
  }
  // Line l of slot (s, j).
  bool take(int d, int k, int s, int j, int l) { return take_line(slot(d, k & 1, s, j)[l], d, k, ""); }
  bool done(const Rank& r) const {
    for (int st : r.owner_stage)
      if (st < 3) return false;
    for (int st : r.pub_stage)
      if (st < 2) return false;
    return true;
  }
  // The combine's read of (sender r, row j) on rank d for op k.
  bool take_comb(int d, int k, int r, int j) { return take_line(cline(d, k & 1, r, j), d, k, "'s combine"); }
  void zero_comb(int d, int par, int s, int j) {
    Line& x = cline(d, par, s, j);
    if (x.need > 0) fail("a combine line was zeroed before its reader took it (op " + std::to_string(x.op) + ")");
    x = Line{};
  }
  // Rank d's combine of op k: its sends once, then a random read that can move, then its end.
  bool step_combine(int d) {
    Rank& r = ranks[d];
    const int k = r.op;
    if (!r.combining) {
      for (int t = 0; t < n; ++t) {
        flight.push_back({t, k & 1, d, R, -1, k});  // the header
        for (int j = 0; j < rows[k][t][d]; ++j) flight.push_back({t, k & 1, d, j, -1, k});  // row j from t, back to t
      }
      r.comb_read.assign(static_cast<size_t>(n) * (R + 1), -1);
      for (int t = 0; t < n; ++t) {
        r.comb_read[t * (R + 1) + R] = 0;
        for (int j = 0; j < rows[k][d][t]; ++j) r.comb_read[t * (R + 1) + j] = 0;
      }
      r.combining = true;
      return true;
    }
    std::vector<int> cand;
    for (int q = 0; q < n * (R + 1); ++q)
      if (r.comb_read[q] == 0) cand.push_back(q);
    std::shuffle(cand.begin(), cand.end(), g);
    for (int q : cand)
      if (take_comb(d, k, q / (R + 1), q % (R + 1))) {
        r.comb_read[q] = 1;
        return true;
      }
    if (!cand.empty() || lines_in_flight(d, k)) return false;
    // The kernel ends: where k cleans, its last block zeroes the area of k's parity (or, broken,
    // only the lines it read, or nothing).
    if (cleans(k) && variant != Variant::kCombineNoZeroing)
      for (int t = 0; t < n; ++t)
        for (int j = 0; j <= R; ++j)
          if (variant != Variant::kCombineZeroesWhatItRead || r.comb_read[t * (R + 1) + j] == 1) zero_comb(d, k & 1, t, j);
    ++r.op;
    start(r);
    return true;
  }
  bool lines_in_flight(int s, int k) const {
    for (const Write& w : flight)
      if (w.s == s && w.op == k) return true;
    return false;
  }
  // One enabled action of rank d (or false).
  bool step_rank(int d) {
    Rank& r = ranks[d];
    const int k = r.op;
    if (k > ops) return false;
    if (r.combining) return step_combine(d);
    // The send (-1) or a pending read, at random: the receive kernel runs beside the send kernel,
    // so its reads may come before this rank's sends.
    std::vector<int> cand;
    if (!r.sent) cand.push_back(-1);
    for (int q = 0; q < n * R; ++q) {
      if (r.owner_stage[q] < 3) cand.push_back(q);
      if (r.pub_stage[q] < 2) cand.push_back(n * R + q);
    }
    std::shuffle(cand.begin(), cand.end(), g);
    for (int c : cand) {
      if (c < 0) {  // every line of k at once: line 0 of every slot of every rank, routing and row lines of its rows
        for (int t = 0; t < n; ++t)
          for (int j = 0; j < R; ++j) {
            flight.push_back({t, k & 1, d, j, 0, k});
            if (j < rows[k][d][t]) {
              flight.push_back({t, k & 1, d, j, 1, k});
              flight.push_back({t, k & 1, d, j, 2, k});
            }
          }
        r.sent = true;
        return true;
      }
      const bool pub = c >= n * R;
      const int q = pub ? c - n * R : c, s = q % n, j = q / n;
      int& st = pub ? r.pub_stage[q] : r.owner_stage[q];
      if (!take(d, k, s, j, st)) continue;
      const bool row = j < rows[k][s][d];
      if (st == 0 && !row) st = pub ? 2 : 3;
      else ++st;
      if (!pub && st == 3 && cleans(k) && variant != Variant::kNoZeroing) {  // the slot's block zeroes its row line (and, broken, the routing line)
        zero(d, k & 1, s, j, 2);
        if (variant == Variant::kOwnerZeroesRouting) zero(d, k & 1, s, j, 1);
      }
      if (!pub && st == 3 && row) claim(d, k, s, j);
      return true;
    }
    if (!r.sent || !done(r) || lines_in_flight(d, k)) return false;
    // Both kernels end: the last block zeroes the routing lines where k cleans; k's counts published.
    if (cleans(k) && variant != Variant::kNoZeroing)
      for (int s = 0; s < n; ++s)
        for (int j = 0; j < R; ++j) zero(d, k & 1, s, j, 1);
    publish(d, k);
    return step_combine(d);  // the combine kernel of k starts (stream order)
  }
  // Claims without a reset (3 experts a rank): each row of slot (s, j) picks an expert; its slot is
  // counter - base[k mod 4], which must come out below the operation's count of that expert.
  std::vector<std::vector<std::vector<unsigned>>> got;  // got[d][e]: slots taken in the running op
  void claim(int d, int k, int s, int j) {
    const int e = (s + j + k) % 3;
    const unsigned sl = counter[d][(k & 1) * 3 + e]++ - base[d][(k & 3) * 3 + e];
    if (got.empty()) got.assign(n, std::vector<std::vector<unsigned>>(3));
    got[d][e].push_back(sl);
  }
  void publish(int d, int k) {
    for (int e = 0; e < 3; ++e) {
      unsigned count = 0;
      for (int s = 0; s < n; ++s)
        for (int j = 0; j < rows[k][s][d]; ++j) count += (s + j + k) % 3 == e ? 1u : 0u;
      std::vector<unsigned> have = got.empty() ? std::vector<unsigned>() : got[d][e], want(count);
      for (unsigned i = 0; i < count; ++i) want[i] = i;
      std::sort(have.begin(), have.end());
      if (have != want) fail("op " + std::to_string(k) + " on rank " + std::to_string(d) + ": expert rows are not 0 .. count - 1");
      if (!got.empty()) got[d][e].clear();
      base[d][((k + 2) & 3) * 3 + e] = base[d][(k & 3) * 3 + e] + count;
    }
  }
  // Runs to the end; false on a violation or where nothing can move with operations left.
  bool run() {
    for (long it = 0; it < 10000000 && violation.empty(); ++it) {
      bool all_done = true;
      for (const Rank& r : ranks) all_done = all_done && r.op > ops;
      if (all_done && flight.empty()) return true;
      // A landing or a rank's step, at random.
      std::vector<int> order(n + 1);
      for (int i = 0; i <= n; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), g);
      bool moved = false;
      for (int o : order) {
        if (o == n) {
          if (flight.empty()) continue;
          const size_t w = g() % flight.size();
          land(flight[w]);
          flight.erase(flight.begin() + static_cast<long>(w));
          moved = true;
        } else {
          moved = step_rank(o);
        }
        if (moved) break;
      }
      if (!moved) {
        fail("no rank can move with operations left (a reader waits for a line that will not come)");
        return false;
      }
    }
    return violation.empty();
  }
};

TEST(MoeLinesModel, AsBuiltHasNoViolationAcrossFlagWraps) {
  for (int n : {1, 2, 3, 4})
    for (int R : {1, 2, 3})
      for (uint64_t seed = 0; seed < 40; ++seed) {
        LinesModel m(n, R, 4, 14, LinesModel::Variant::kAsBuilt, seed * 7919 + n * 31 + R);
        ASSERT_TRUE(m.run()) << n << " ranks, R " << R << ", seed " << seed << ": " << m.violation;
      }
}

TEST(MoeLinesModel, WithoutZeroingAStaleLineIsTaken) {
  bool seen = false;
  for (uint64_t seed = 0; seed < 400 && !seen; ++seed) {
    LinesModel m(3, 2, 3, 16, LinesModel::Variant::kNoZeroing, seed);
    seen = !m.run() && m.violation.find("took a line of op") != std::string::npos;
  }
  EXPECT_TRUE(seen);
}

TEST(MoeLinesModel, CombineWithoutZeroingTakesAStaleLine) {
  for (LinesModel::Variant v : {LinesModel::Variant::kCombineNoZeroing, LinesModel::Variant::kCombineZeroesWhatItRead}) {
    bool seen = false;
    for (uint64_t seed = 0; seed < 400 && !seen; ++seed) {
      LinesModel m(3, 2, 3, 16, v, seed);
      seen = !m.run() && m.violation.find("combine took a line of op") != std::string::npos;
    }
    EXPECT_TRUE(seen) << static_cast<int>(v);
  }
}

TEST(MoeLinesModel, OwnersZeroingTheRoutingLinesBreaksThePublisher) {
  bool seen = false;
  for (uint64_t seed = 0; seed < 400 && !seen; ++seed) {
    LinesModel m(3, 2, 4, 10, LinesModel::Variant::kOwnerZeroesRouting, seed);
    seen = !m.run();
  }
  EXPECT_TRUE(seen);
}

}  // namespace
