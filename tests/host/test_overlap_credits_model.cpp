// A model of matmul_reduce_scatter's credits (src/overlap/credits.cuh), run: N ranks make the same
// calls, each of one form, under random interleavings of their steps.
// - fused: no barrier; the GEMM's launch reads this rank's epoch; its pushes (one a peer) wait for
//   the gate, which opens once every peer's credit has reached that epoch; the call ends once its
//   pushes are out and every peer's push into this rank has landed.
// - barrier (the sum and ring forms): a barrier, the pushes, the peers' pushes landed, the end.
// - sequential: its GEMM writes this rank's recv, a reduce-scatter that starts once every rank has
//   written (its input) and ends once every rank has read (direct's closing barrier), the end.
// Every call's end adds 1 to the epoch and hands every peer the new value as its credit (the
// sequential form's end can be left out: the bug session 60's GPU test found). Checked: no rank
// pushes into a peer's recv for call c before that peer has finished every call before c (what the
// signals' reuse and the slots' data need, whatever the calls' shapes), and every run completes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

enum class Kind { kFused, kBarrier, kSequential };

struct Options {
  bool sequential_ends = true;  // the sequential form ends its calls (hands out credits)
  bool gate = true;             // the fused form's pushes wait for the credits
};

// "" when every rank ends every call with no push too early; else the first fault, or what is stuck.
std::string run_credits_model(int ranks, const std::vector<Kind>& calls, unsigned seed, Options opt = {}) {
  const int nc = static_cast<int>(calls.size());
  struct Rank {
    int call = 0, phase = 0;
    long epoch = 0, launch_epoch = 0;
    std::vector<long> credit;  // credit[q]: what rank q handed this rank
    std::vector<bool> pushed;  // this call's pushes, a peer each
  };
  std::vector<Rank> rk(ranks);
  for (Rank& r : rk) {
    r.credit.assign(ranks, 0);
    r.pushed.assign(ranks, false);
  }
  // landed[c][to][from]; arrivals at each call's barrier, the reduce-scatter's start and its end.
  std::vector<std::vector<std::vector<bool>>> landed(nc, std::vector<std::vector<bool>>(ranks, std::vector<bool>(ranks, false)));
  std::vector<int> at_barrier(nc, 0), at_rs(nc, 0), rs_read(nc, 0);
  auto all_landed = [&](int c, int to) {
    for (int q = 0; q < ranks; ++q)
      if (q != to && !landed[c][to][q]) return false;
    return true;
  };
  auto all_pushed = [&](const Rank& r, int me) {
    for (int q = 0; q < ranks; ++q)
      if (q != me && !r.pushed[q]) return false;
    return true;
  };
  auto gate_open = [&](const Rank& r, int me) {
    if (!opt.gate) return true;
    for (int q = 0; q < ranks; ++q)
      if (q != me && r.credit[q] < r.launch_epoch) return false;
    return true;
  };
  auto end_call = [&](int me, bool credits) {
    Rank& r = rk[me];
    if (credits) {
      ++r.epoch;
      for (int q = 0; q < ranks; ++q)
        if (q != me) rk[q].credit[me] = r.epoch;
    }
    ++r.call;
    r.phase = 0;
    r.pushed.assign(ranks, false);
  };
  std::mt19937 rng(seed);
  for (;;) {
    // Each rank's enabled steps: a push to a peer (its index), or -1 for its next phase.
    std::vector<std::pair<int, int>> ready;
    bool done = true;
    for (int me = 0; me < ranks; ++me) {
      const Rank& r = rk[me];
      if (r.call == nc) continue;
      done = false;
      const int c = r.call;
      switch (calls[c]) {
        case Kind::kFused:
        case Kind::kBarrier:
          // 0: the launch (fused) or the arrival at the barrier; 1: the pushes, once the gate is
          // open (fused) or every rank has arrived; the end, once pushed and landed
          if (r.phase == 0) {
            ready.push_back({me, -1});
          } else {
            if (calls[c] == Kind::kFused ? gate_open(r, me) : at_barrier[c] == ranks)
              for (int q = 0; q < ranks; ++q)
                if (q != me && !r.pushed[q]) ready.push_back({me, q});
            if (all_pushed(r, me) && all_landed(c, me)) ready.push_back({me, -1});
          }
          break;
        case Kind::kSequential:
          // 0: the GEMM into recv, arrive at the reduce-scatter; 1: read (once all arrived);
          // 2: the end (once all have read)
          if (r.phase == 0 || (r.phase == 1 && at_rs[c] == ranks) || (r.phase == 2 && rs_read[c] == ranks)) ready.push_back({me, -1});
          break;
      }
    }
    if (done) return "";
    if (ready.empty()) {
      std::string why = "stuck:";
      for (int me = 0; me < ranks; ++me)
        why += " rank " + std::to_string(me) + " call " + std::to_string(rk[me].call) + " phase " + std::to_string(rk[me].phase) + ";";
      return why;
    }
    auto [me, q] = ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng)];
    Rank& r = rk[me];
    const int c = r.call;
    if (q >= 0) {  // a push of call c into q's recv: q must have finished every call before c
      if (rk[q].call < c)
        return "rank " + std::to_string(me) + " pushed into rank " + std::to_string(q) + "'s recv for call " + std::to_string(c) +
               " while that rank was in call " + std::to_string(rk[q].call);
      r.pushed[q] = true;
      landed[c][q][me] = true;
      continue;
    }
    switch (calls[c]) {
      case Kind::kFused:
      case Kind::kBarrier:
        if (r.phase == 0) {
          if (calls[c] == Kind::kFused) r.launch_epoch = r.epoch;
          else ++at_barrier[c];
          r.phase = 1;
        } else {
          end_call(me, true);
        }
        break;
      case Kind::kSequential:
        if (r.phase == 0) {
          ++at_rs[c];
          r.phase = 1;
        } else if (r.phase == 1) {
          ++rs_read[c];
          r.phase = 2;
        } else {
          end_call(me, opt.sequential_ends);
        }
        break;
    }
  }
}

std::vector<Kind> random_calls(std::mt19937& g, int count) {
  std::vector<Kind> calls;
  for (int i = 0; i < count; ++i) calls.push_back(static_cast<Kind>(std::uniform_int_distribution<int>(0, 2)(g)));
  return calls;
}

}  // namespace

// Random sequences of the three forms at 2-8 ranks, many interleavings each: no push is early, and
// every run ends (the credit a gate waits for is the peer's end of an earlier call).
TEST(OverlapCredits, NoPushBeforeThePeerEndsItsEarlierCallsAndEveryRunEnds) {
  std::mt19937 g(2026);
  for (int ranks : {2, 3, 4, 8})
    for (int seq = 0; seq < 20; ++seq) {
      const std::vector<Kind> calls = random_calls(g, 12);
      for (unsigned il = 0; il < 20; ++il) {
        const std::string why = run_credits_model(ranks, calls, 1000u * seq + il);
        ASSERT_EQ(why, "") << ranks << " ranks, sequence " << seq << ", interleaving " << il;
      }
    }
}

// The model can tell: a sequential form that hands out no credits lets a fused call after it push
// into a peer still in its reduce-scatter (session 60's bug); fused pushes without the gate push
// into a peer still in the call before.
TEST(OverlapCredits, WithoutTheSequentialEndOrTheGateSomeInterleavingPushesEarly) {
  auto some_early = [](const std::vector<Kind>& calls, Options opt) {
    for (unsigned il = 0; il < 400; ++il)
      if (run_credits_model(2, calls, il, opt).find("pushed into") != std::string::npos) return true;
    return false;
  };
  Options no_end;
  no_end.sequential_ends = false;
  EXPECT_TRUE(some_early({Kind::kFused, Kind::kSequential, Kind::kFused}, no_end));
  Options no_gate;
  no_gate.gate = false;
  EXPECT_TRUE(some_early({Kind::kFused, Kind::kFused}, no_gate));
  EXPECT_FALSE(some_early({Kind::kFused, Kind::kSequential, Kind::kFused}, Options{}));
}
