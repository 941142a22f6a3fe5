// Host side of expert-parallel dispatch/combine: configuration checks (the same on every rank),
// the buffer layout, argument checks, launches.
#include "symmem/moe.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "../runtime/agree.hpp"
#include "../runtime/call_scope.hpp"
#include "../runtime/device_code.hpp"
#include "moe_kernels.hpp"
#include "symmem/device/workspace.hpp"
#include "symmem/env.hpp"
#include "symmem/error.hpp"

namespace symmem::moe {

namespace detail {
int scale_words(int hidden, bool fp8, bool ue8m0) {
  if (!fp8) return 0;
  const int groups = (hidden + kern::kScaleGroup - 1) / kern::kScaleGroup;
  return ue8m0 ? (groups + 3) / 4 : groups;
}
size_t row_bytes(int hidden, bool fp8, bool ue8m0) {
  const size_t payload = static_cast<size_t>(hidden) * (fp8 ? 1 : 2);
  // Rows of 2 KiB and more start on a 128-byte line (fp8 H 7168 with its scales is 7392 bytes:
  // 7424), so that a warp's stores into a staged row cover whole lines; smaller rows keep 16.
  const size_t bytes = symmem::detail::checked_round_up(payload + 4 * static_cast<size_t>(scale_words(hidden, fp8, ue8m0)), 16, "moe row");
  return bytes >= 2048 ? symmem::detail::checked_round_up(bytes, 128, "moe row") : bytes;
}

std::string check_config(const Config& c, int n) {
  std::ostringstream why;
  if (c.hidden <= 0) why << "hidden=" << c.hidden << " must be positive; ";
  else if ((static_cast<size_t>(c.hidden) * (c.fp8 ? 1 : 2)) % 16 != 0 || c.hidden % 8 != 0)
    why << "hidden=" << c.hidden << ": a row must be a multiple of 16 bytes (hidden a multiple of " << (c.fp8 ? 16 : 8) << "); ";
  if (c.topk < 1 || c.topk > kern::kMaxTopk) why << "topk=" << c.topk << " must be in [1, " << kern::kMaxTopk << "]; ";
  if (c.num_experts <= 0 || c.num_experts % n != 0)
    why << "num_experts=" << c.num_experts << " must be a positive multiple of the " << n << " ranks; ";
  if (c.max_tokens <= 0) why << "max_tokens=" << c.max_tokens << " must be positive; ";
  if (c.capacity < 0) why << "capacity=" << c.capacity << " must be >= 0 (0: nranks * max_tokens); ";
  if (c.ue8m0 && !c.fp8) why << "ue8m0 scales go with fp8 only; ";
  if (c.round_tokens < 0) why << "round_tokens=" << c.round_tokens << " must be >= 0 (0: max_tokens); ";
  if (static_cast<int>(c.kernels) < 0 || static_cast<int>(c.kernels) > 2)
    why << "kernels=" << static_cast<int>(c.kernels) << " is not a moe::Kernels value (kAuto, kTwo, kOne); ";
  if (n > 64) why << "expert parallelism over more than 64 ranks is not supported (" << n << "); ";
  std::string s = why.str();
  if (!s.empty()) s.resize(s.size() - 2);
  return s;
}
}  // namespace detail

namespace kern {
Layout make_layout(const Config& c, int n, int ll_tokens, int ll_payload) {
  using symmem::detail::checked_add;
  using symmem::detail::checked_mul;
  Layout L;
  L.n = n;
  L.hidden = c.hidden;
  L.topk = c.topk;
  L.experts_local = c.num_experts / n;
  L.max_tokens = c.max_tokens;
  L.capacity = c.capacity;
  L.fp8 = c.fp8;
  L.scale_words = moe::detail::scale_words(c.hidden, c.fp8, c.ue8m0);
  L.row = moe::detail::row_bytes(c.hidden, c.fp8, c.ue8m0);
  L.round = c.round_tokens > 0 && c.round_tokens < c.max_tokens ? c.round_tokens : c.max_tokens;
  L.rounds = (c.max_tokens + L.round - 1) / L.round;
  L.sender_claims = L.rounds == 1;
  const bool small = ll_tokens >= 0 ? L.round <= ll_tokens
                                     : L.round <= kLLTokens || static_cast<long long>(L.round) * c.hidden <= ll_channels_for(n);
  L.ll = L.rounds == 1 && small && L.round <= kLLMaxTokens && L.experts_local <= kLLMaxExperts;
  // The lines combine's format and item (combine_ll.cu: kLLCSegLines lines, of a lane's 2 or 3
  // vectors); otherwise (L.seg_bytes is kSegBytes here) half items for a small combine.
  if (L.ll) {
    L.llc_payload = static_cast<uint32_t>(ll_payload != 0 ? ll_payload : llc_payload_for(n, L.round, 2LL * c.hidden));
    L.seg_bytes = static_cast<int>(kLLCSegLines * L.llc_payload);
  } else if (L.rounds == 1 && static_cast<long long>(n) * L.round * row_segments(L) <= kSmallCombineItems) {
    L.seg_bytes = kSegBytes / 2;
  }
  L.ring_rows = 2u * static_cast<uint32_t>(L.round);
  if (n > 2) L.ring_rows = std::min(L.ring_rows, kRingRowsWide);
  const size_t slots = checked_mul(2u * static_cast<size_t>(n), static_cast<size_t>(L.round), "moe staging rows");
  const size_t records = checked_mul(2u * static_cast<size_t>(n), static_cast<size_t>(c.max_tokens), "moe routing records");
  size_t off = 0;
  auto take = [&](size_t bytes) {
    const size_t at = off;
    off = symmem::detail::checked_round_up(checked_add(off, bytes, "moe buffer"), 256, "moe buffer");
    return at;
  };
  L.stage_off = take(checked_mul(slots, L.row, "moe staging"));
  L.meta_off = take(checked_mul(records, sizeof(Meta), "moe routing records"));
  L.comb_off = take(checked_mul(slots, static_cast<size_t>(c.hidden) * 2, "moe combine area"));
  L.send_count_off = take(sizeof(unsigned) * n);
  L.sent_total_off = take(sizeof(unsigned) * n);
  L.token_ranks_off = take(sizeof(uint64_t) * c.max_tokens);
  L.expert_count_off = take(sizeof(unsigned) * 2 * L.experts_local);  // [operation parity][E_local]
  L.recv_total_off = take(sizeof(unsigned) * n);
  L.round_counts_off = take(checked_mul(sizeof(unsigned) * n, static_cast<size_t>(L.rounds), "moe round counts"));
  L.arrive_off = take(sizeof(unsigned) * kCounters);
  L.trace_off = take(sizeof(uint64_t) * kTracePoints);
  L.flag_base_off = take(sizeof(uint64_t) * 4 * pad::kMaxTeam);
  const size_t ring_words = checked_mul(static_cast<size_t>(n), static_cast<size_t>(ring_slots(L)), "moe ring words");
  L.ring_ready_off = take(checked_mul(ring_words, sizeof(uint64_t), "moe ring ready words"));
  L.ring_release_off = take(checked_mul(ring_words, sizeof(uint64_t), "moe ring release words"));
  L.ring_announce_off = take(sizeof(uint64_t) * 2 * n);  // [operation parity][source]
  L.ring_state_off = take(sizeof(uint64_t) * RingState::words(n));
  L.ring_claims_off = take(sizeof(unsigned) * n);
  L.ring_rc_off = take(checked_mul(sizeof(unsigned) * n, static_cast<size_t>(L.rounds), "moe ring round counts"));
  L.ring_gc_off = take(checked_mul(sizeof(unsigned) * n, static_cast<size_t>((c.max_tokens + kRingGroup - 1) / kRingGroup), "moe ring group counts"));
  L.cring_ready_off = take(checked_mul(ring_words, sizeof(uint64_t), "moe combine ring ready words"));
  L.cring_release_off = take(checked_mul(ring_words, sizeof(uint64_t), "moe combine ring release words"));
  L.token_q_off = take(checked_mul(sizeof(unsigned) * n, static_cast<size_t>(c.max_tokens), "moe token row numbers"));
  if (L.ll) {
    const size_t message = static_cast<size_t>(c.hidden) * L.elem() + 4 * static_cast<size_t>(L.scale_words);
    L.ll_slot_lines = static_cast<uint32_t>(1 + c.topk + ws::ll_lines<ws::kLLNarrow>(message));
    L.ll_off = take(checked_mul(slots, static_cast<size_t>(L.ll_slot_lines) * ws::kLLLineBytes, "moe line slots"));
    L.ll_ops_off = take(sizeof(uint64_t) * 2 * (static_cast<size_t>(n) * L.round + 1));
    L.ll_base_off = take(sizeof(unsigned) * 4 * static_cast<size_t>(L.experts_local));
    L.llc_slot_lines = static_cast<uint32_t>(row_segments(L) * kLLCSegLines);  // (a partial last segment's lines included)
    L.llc_off = take(checked_mul(2 * static_cast<size_t>(n) + slots * L.llc_slot_lines, ws::kLLLineBytes, "moe combine line slots"));
    // A warp a work item: the send half's (row, segment) items bound every grid of it.
    L.llc_blocks = static_cast<uint32_t>((static_cast<long long>(n) * L.round * row_segments(L) + kThreads / 32 - 1) / (kThreads / 32));
    L.llc_marks_off = take(sizeof(uint64_t) * 2 * static_cast<size_t>(L.llc_blocks));
  }
  L.bytes = off;
  return L;
}
}  // namespace kern

struct ExpertParallel::Impl {
  SymmetricBuffer buf;
  kern::Layout L;
  int sms = 132;
  bool one_kernel = false;  // Config::kernels resolved for combine: from the config and shares_gpu, the same on every rank
  bool dispatch_one = false;  // the same for dispatch (kAuto also takes one kernel a round for several rounds at 1-2 ranks)
  int resident_blocks = 1;  // blocks of every MoE kernel that stay resident at once: no grid is larger (one
                            // kernel a round needs it; two kernels then need no second wave)
  int resident_pipe = 1;  // the same for the pipelined combine's grid (kCombinePipeBlocksPerSm)
  int last_tokens = 0;
  // Streamed dispatch (dispatch_ring.cu; unless SYMMEM_MOE_RING=0, the same on every rank): an
  // operation of several rounds as one persistent kernel, where every rank has its own GPU (kAuto);
  // its grid stays resident (ring_blocks, agreed like the others).
  bool ring = false;
  int ring_blocks = 0;
  // Streamed combine (combine_ring.cu): where the dispatch streams, unless SYMMEM_MOE_COMBINE_RING=0
  // (the same on every rank); its grid stays resident (cring_blocks, agreed like the others).
  bool cring = false;
  int cring_blocks = 0;
  int send_share = 75;  // percent of a pipelined round's grid that stores the next round (SYMMEM_MOE_SEND_SHARE; rank-local)
  // Percent of the streamed dispatch's grid that sends (SYMMEM_MOE_SEND_SHARE where set; else
  // ring_share_for). At two blocks an SM, prefill on 4 x H100: 40% 317 us, 50% 299, 55% 304, 60%
  // 294, 65% 291 (its combine 3% slower after it), 70% 308; on 2 of its GPUs: 50% 208, 60% 196, 70%
  // 186 (session 22; bench/results/2026-11-27-h100x4-4a7ae0a-moe-prefill-*). (One block an SM,
  // session 21: 25% 521, 50% 338, 60% 317, 75% 435, 90% 890: the copy pools starve or the senders do.)
  // Session 23, 4 x H200 (senders a block a group, before the two-rank senders): at 2 GPUs 50% 166,
  // 70% 148.4, 75% 148.2; on 4 x H100 at 4 GPUs 50% 289, 60% 287, 75% 330. The two-rank senders (a
  // warp a token, dispatch_ring.cu) were measured at 70% only.
  int ring_share = 0;
  // Percent of the streamed combine's grid that sends (SYMMEM_MOE_COMBINE_SHARE, else
  // SYMMEM_MOE_SEND_SHARE, else comb_share_for; rank-local).
  int comb_share = 0;
  // The lines combine's blocks that stay resident (the least over the team): its one-kernel grid
  // keeps within them.
  int ll_resident = 1;
};

// The streamed combine's default send share. Session 24, 4 x H100, prefill combine (us, two passes,
// bench/results/2026-11-27-h100x4-60656a7-moe-*gpus-c*): on 2 GPUs 50% 284.1 / 283.5, 60% 281.7 /
// 281.8, 65% 281.2 / 281.6, 70% 278.6 / 278.6, 75% 286.4 / 286.2 (skewed 335-341 at every share);
// at 4 GPUs 60% 471.8, 65% 471.3, 75% 471.4, 85% 497.0.
static int comb_share_for(int nranks) { return nranks == 2 ? 70 : 75; }

// The streamed dispatch's default send share: at 2 ranks half of a token's rows are the sender's own
// (stored by the send blocks straight into its experts), so the senders want more of the grid.
// With the bulk copy (session 25, 4 x H200, prefill; bench/results/2026-11-27-h200x4-*-s25c{2,3}-*):
// at 2 GPUs 65% 125.5 us in three runs against 70%'s 127.7-128.1 (skewed level, 141.4-141.6; the
// combine after it +1.2 us uniform, -1 skewed); at 4 GPUs 65% 277.0-277.4 against 60%'s
// 279.2-279.6, but skewed 288.6-289.6 against 290.1-290.4 with a combine 3-4 us slower after it
// (the pair +2.4 us skewed, -2.4 uniform), so 60% stays there. 4 x H100, 2 GPUs, 65% with the bulk
// copy: 149.7-149.8 against the session-24 way's 154.5-154.6 (...-h100x4-8a13d42-s25c7-*).
static int ring_share_for(int nranks) { return nranks == 2 ? 65 : 60; }

// The streamed combine's least send blocks: a send warp for every rank (its pools, combine_ring.cu).
static int cring_send_blocks_min(int nranks) { return (nranks + kern::kThreads / 32 - 1) / (kern::kThreads / 32); }

// The streamed dispatch's least copy blocks: a copy warp for every source (its pools, dispatch_ring.cu).
static int ring_copy_blocks_min(int nranks) {
  return std::max(1, (nranks - 1 + kern::kThreads / 32 - 1) / (kern::kThreads / 32));
}

ExpertParallel::ExpertParallel(Communicator& comm, const Config& cfg) : comm_(comm), cfg_(cfg), impl_(std::make_unique<Impl>()) {
  symmem::detail::DeviceGuard device(comm.context().device());
  nranks_ = comm.size();
  rank_ = comm.rank();
  if (cfg_.capacity == 0) cfg_.capacity = nranks_ * cfg_.max_tokens;
  std::string why = detail::check_config(cfg_, nranks_);
  // SYMMEM_MOE_RING / SYMMEM_MOE_COMBINE_RING: unset, empty or 1, the streamed dispatch / combine
  // where it can run (below); 0, the rounds. Part of the compared config, so ranks that differ are
  // refused on every rank; any other value is a config error (on every rank, likewise).
  auto wanted = [&why](const char* name) {
    const char* env = std::getenv(name);
    const std::string v = env != nullptr ? env : "";
    if (v != "" && v != "0" && v != "1")
      symmem::detail::add_reason(why, std::string(name) + "=" + v + " is neither 0 nor 1 (unset it for the default)");
    return v != "0";
  };
  const bool want_ring = wanted("SYMMEM_MOE_RING"), want_cring = wanted("SYMMEM_MOE_COMBINE_RING");
  // SYMMEM_MOE_SENDER_CLAIMS=0: the receive copy claims the expert rows at one round too (a
  // measurement knob; Layout::sender_claims), compared like the two above.
  const bool want_sender_claims = wanted("SYMMEM_MOE_SENDER_CLAIMS");
  // SYMMEM_MOE_LL=0: small rounds take the staged dispatch too (Layout::ll; a measurement knob),
  // compared like the others.
  const bool want_ll = wanted("SYMMEM_MOE_LL");
  // The numeric measurement knobs; unset or empty: `unset`. A value out of range is a config error
  // on every rank, like the flags above (it used to throw on its rank alone, below, while the others
  // went on into the allocation and waited there for it).
  auto number = [&why](const char* name, long lo, long hi, long unset) { return symmem::detail::knob_number(why, name, lo, hi, unset); };
  // SYMMEM_MOE_LL_TOKENS=N (1 .. kLLMaxTokens): rounds of at most N tokens take the lines (the
  // threshold, kern::kLLTokens, where unset: -1).
  const int ll_tokens = static_cast<int>(number("SYMMEM_MOE_LL_TOKENS", 1, kern::kLLMaxTokens, -1));
  // SYMMEM_MOE_LL_WIDE=1 / 0: the lines combine in wide / narrow lines whatever the size (a
  // measurement knob for kern::llc_payload_for; 0 where unset: the rule).
  int ll_payload = 0;
  if (const char* v = std::getenv("SYMMEM_MOE_LL_WIDE"); v != nullptr && *v != 0)
    ll_payload = static_cast<int>(wanted("SYMMEM_MOE_LL_WIDE") ? ws::kLLPayload : ws::kLLNarrow);
  // SYMMEM_MOE_BACKOFF_NS (the waiters' sleep between polls), SYMMEM_MOE_TUNE (kern::Tune bits),
  // SYMMEM_MOE_SEND_SHARE / SYMMEM_MOE_COMBINE_SHARE (percent of a grid that sends): below; these
  // four are rank-local (not compared: the protocols count rows, not the blocks that send them).
  const long backoff_ns = number("SYMMEM_MOE_BACKOFF_NS", 0, 100000, -1);
  const long tune = number("SYMMEM_MOE_TUNE", 0, 255, kern::kTuneDefault);
  const long send_share = number("SYMMEM_MOE_SEND_SHARE", 0, 100, -1);
  const long comb_share = number("SYMMEM_MOE_COMBINE_SHARE", 1, 99, -1);
  // The same verdict and the same config everywhere: compare before anyone allocates. Each rank
  // also says (after '|', not compared) whether its GPU's memory is slow enough for the dispatch
  // choice below; the team takes it only if every rank does.
  int dev = 0, mem_khz = 0, bus_bits = 0;
  SYMMEM_CUDA_CHECK(cudaGetDevice(&dev));
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev));
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  const double mem_bytes_s = 2.0 * mem_khz * 1e3 * bus_bits / 8;  // (double data rate)
  std::ostringstream mine;
  mine << "hidden=" << cfg_.hidden << " topk=" << cfg_.topk << " num_experts=" << cfg_.num_experts << " max_tokens=" << cfg_.max_tokens
       << " capacity=" << cfg_.capacity << " fp8=" << cfg_.fp8 << " ue8m0=" << cfg_.ue8m0 << " round_tokens=" << cfg_.round_tokens
       << " kernels=" << static_cast<int>(cfg_.kernels) << " SYMMEM_MOE_RING=" << want_ring << " SYMMEM_MOE_COMBINE_RING=" << want_cring
       << " SYMMEM_MOE_SENDER_CLAIMS=" << want_sender_claims << " SYMMEM_MOE_LL=" << want_ll << " SYMMEM_MOE_LL_TOKENS=" << ll_tokens
       << " SYMMEM_MOE_LL_WIDE=" << ll_payload;
  const auto slow = comm.team().require_same(mine.str(), "moe::ExpertParallel's config", why, mem_bytes_s < 4e12 ? "1" : "0",
                                             "; give every rank the same");
  const bool slow_memory = std::all_of(slow.begin(), slow.end(), [](const std::string& f) { return f == "1"; });
  // (shares_gpu is the same on every rank, and so is the config by now: every rank decides alike.)
  if (cfg_.kernels == Kernels::kOne && comm.shares_gpu())
    fail("moe::ExpertParallel: one kernel a round (Kernels::kOne) needs one rank per GPU (ranks of this team share a GPU, "
         "and a waiting grid of one could keep another's from running); use kAuto or kTwo here");
  impl_->L = kern::make_layout(cfg_, nranks_, want_ll ? ll_tokens : 0, ll_payload);
  impl_->L.sender_claims = impl_->L.sender_claims && want_sender_claims;
  if (const char* t = std::getenv("SYMMEM_MOE_TRACE")) impl_->L.trace = std::string(t) == "1";
  const bool own_gpus = cfg_.kernels == Kernels::kAuto && !comm.shares_gpu();
  impl_->one_kernel = cfg_.kernels == Kernels::kOne || (own_gpus && impl_->L.rounds == 1);
  // Dispatch over several rounds at one or two ranks, on GPUs whose memory peaks below 4 TB/s: one
  // kernel a round, whose send half writes this rank's own rows (half of them at 2 ranks) into its
  // experts (self_direct), beat the pipelined rounds on 2 x H100 (3.35 TB/s; session 16, prefill:
  // 225-227 us against 242-245 in the same calls; the pipelined rounds with self-direct 244.5 at
  // their best split) and lost on 2 x H200 (4.8 TB/s; 233.5 against 217.8: there the pipelined
  // rounds' copy keeps up). At 4 ranks the pipelined rounds stay ahead (4 x H100, session 11: 347
  // against 425 staged; 4 x H200, session 17: 336 against 380 with self-direct), so they stay
  // there. (Every rank's GPU must qualify: the team agrees on it above, since the grids' block
  // counts depend on it.)
  impl_->dispatch_one = impl_->one_kernel || (own_gpus && nranks_ <= 2 && slow_memory);
  // An operation of several rounds where every rank has its own GPU (kAuto) streams through the
  // rings instead (unless SYMMEM_MOE_RING=0). Prefill: 4 x H100 294 us against the pipelined
  // rounds' 344-345 (skewed 319 against 406), 2 of its GPUs 186 against one kernel a round's 237
  // (skewed 220 against 267); 4 x H200 283-284 against 338 (skewed 296 against 359), 2 of its GPUs
  // 150 against 218 (skewed 164 against 252); the rounds' combine after either level within 1%
  // (bench/results/2026-11-27-{h100x4-4a7ae0a,h200x4-53e631e}-moe-prefill-*). At two ranks its
  // senders take a warp a token since session 23: 2 of 4 x H200 130 (skewed 144). Its combine
  // streams too (cring, below; combine_ring.cu).
  // (A group's rows to one rank take that many slots at once: the ring needs 2R >= kRingGroup.)
  impl_->ring = want_ring && own_gpus && impl_->L.rounds > 1 && kern::ring_slots(impl_->L) >= static_cast<uint64_t>(kern::kRingGroup);
  // Waiters sleep between polls where many blocks may wait long beside work they wait for: one
  // kernel a round, and pipelined rounds (their every block waits for the round's flags first;
  // under skewed routing the light ranks wait while the hot rank stores into their memory).
  impl_->L.backoff_ns = backoff_ns >= 0 ? static_cast<unsigned>(backoff_ns) : impl_->dispatch_one || impl_->L.rounds > 1 ? 200 : 0;
  impl_->L.tune = static_cast<unsigned>(tune);
  // Before sm_90 there is no bulk-copy unit (nor in code generated for an older architecture,
  // device_code.hpp): the streamed copy stores from registers, and its grid takes no shared stages
  // (they would halve its blocks an SM on a GPU of 164 KiB).
  if (!symmem::detail::device_code_has_sm90()) impl_->L.tune &= ~static_cast<unsigned>(kern::kRingCopyBulk);
  if (send_share >= 0) impl_->send_share = impl_->ring_share = impl_->comb_share = static_cast<int>(send_share);
  if (comb_share >= 0) impl_->comb_share = static_cast<int>(comb_share);
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&impl_->sms, cudaDevAttrMultiProcessorCount, dev));
  impl_->resident_blocks = std::max(1, impl_->sms * std::min(kern::dispatch_resident_blocks_per_sm(), kern::combine_resident_blocks_per_sm()));
  impl_->resident_pipe = std::max(1, impl_->sms * kern::combine_pipe_resident_blocks_per_sm());
  impl_->ring_blocks = std::max(1, impl_->sms * kern::dispatch_ring_resident_blocks_per_sm(impl_->L.tune));
  impl_->cring_blocks = std::max(1, impl_->sms * kern::combine_ring_resident_blocks_per_sm());
  impl_->ll_resident = std::max(1, impl_->sms * kern::combine_ll_resident_blocks_per_sm());
  // A receiver counts every sender's blocks (moe_kernels.hpp): the grids are sized from facts every
  // rank shares, the least SM count and residency over the team.
  {
    const auto facts = comm.team().all_gather(
        std::to_string(impl_->sms) + ' ' + std::to_string(impl_->resident_blocks) + ' ' + std::to_string(impl_->resident_pipe) + ' ' +
            std::to_string(impl_->ring_blocks) + ' ' + std::to_string(impl_->cring_blocks) + ' ' + std::to_string(impl_->ll_resident),
        "moe grid facts");
    for (const std::string& f : facts) {
      std::istringstream in(f);
      int sms = 0, resident = 0, resident_pipe = 0, ring_blocks = 0, cring_blocks = 0, ll_resident = 0;
      in >> sms >> resident >> resident_pipe >> ring_blocks >> cring_blocks >> ll_resident;
      impl_->sms = std::min(impl_->sms, sms);
      impl_->resident_blocks = std::min(impl_->resident_blocks, resident);
      impl_->resident_pipe = std::min(impl_->resident_pipe, resident_pipe);
      impl_->ring_blocks = std::min(impl_->ring_blocks, ring_blocks);
      impl_->cring_blocks = std::min(impl_->cring_blocks, cring_blocks);
      impl_->ll_resident = std::min(impl_->ll_resident, ll_resident);
    }
    // Up to kMaxWarpsPerSm warps an SM, and at least one send and one copy block.
    impl_->ring_blocks = std::min({impl_->ring_blocks, impl_->sms * kern::kMaxWarpsPerSm / (kern::kThreads / 32), kern::kRingMaxBlocks});
    impl_->ring = impl_->ring && impl_->ring_blocks >= 1 + ring_copy_blocks_min(nranks_);
    impl_->cring_blocks = std::min({impl_->cring_blocks, impl_->sms * kern::kMaxWarpsPerSm / (kern::kThreads / 32), kern::kRingMaxBlocks});
    impl_->cring = impl_->ring && want_cring && impl_->cring_blocks >= 1 + cring_send_blocks_min(nranks_);
  }
  // The buffer last, once nothing above can refuse: no destructor runs for a constructor that
  // throws, so what follows frees it where it throws. The local counters start at zero (the pad,
  // epoch and flags included, is zeroed by the heap).
  impl_->buf = comm.alloc(impl_->L.bytes);
  try {
    char* base = static_cast<char*>(impl_->buf.ptr());
    SYMMEM_CUDA_CHECK(cudaMemset(base + impl_->L.send_count_off, 0, impl_->L.bytes - impl_->L.send_count_off));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    comm.team().barrier("moe::ExpertParallel ready");
  } catch (...) {
    try {
      comm.free(impl_->buf);
    } catch (...) {
    }
    throw;
  }
}

ExpertParallel::~ExpertParallel() {
  symmem::detail::DeviceGuard device(comm_.context().device(), std::nothrow);
  if (impl_ && impl_->buf.valid()) {
    try {
      comm_.free(impl_->buf);
    } catch (...) {
    }
  }
}

size_t ExpertParallel::bytes_per_rank() const { return impl_->L.bytes; }
bool ExpertParallel::one_kernel_per_round() const { return impl_->one_kernel; }
bool ExpertParallel::dispatch_one_kernel_per_round() const { return impl_->dispatch_one && !impl_->L.ll; }
bool ExpertParallel::dispatch_streamed() const { return impl_->ring; }
bool ExpertParallel::dispatch_lines() const { return impl_->L.ll; }
bool ExpertParallel::combine_streamed() const { return impl_->cring; }
std::vector<uint64_t> ExpertParallel::trace_ns() const {
  if (!impl_->L.trace) return {};
  std::vector<uint64_t> t(kern::kTracePoints);
  SYMMEM_CUDA_CHECK(cudaMemcpy(t.data(), static_cast<const char*>(impl_->buf.ptr()) + impl_->L.trace_off, t.size() * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost));
  return t;
}

static void require_aligned(const void* p, const char* what) {
  require((reinterpret_cast<uintptr_t>(p) & 15u) == 0, "moe: ", what, " must be 16-byte aligned");
}

// Blocks for a warp per work item, up to kMaxWarpsPerSm warps an SM and no more than stay resident
// at once (the kernels loop over what is left): each item is a short chain of dependent loads and
// stores, so many must be in flight, and a second wave would wait for the first.
static int blocks_for(long long warps_of_work, int sms, int resident) {
  const long long per_block = kern::kThreads / 32;
  const long long cap = std::min<long long>(static_cast<long long>(sms) * kern::kMaxWarpsPerSm / per_block, resident);
  return static_cast<int>(std::clamp<long long>((warps_of_work + per_block - 1) / per_block, 1, std::max<long long>(1, cap)));
}

// Round j of an operation over this rank's `tokens`.
static kern::Round round_of(const kern::Layout& L, int j, int tokens) {
  const int t0 = std::min(j * L.round, tokens), t1 = std::min((j + 1) * L.round, tokens);
  return kern::Round{j, t0, t1, j == 0, j == L.rounds - 1};
}

// SYMMEM_DEBUG_CHECKS=1: every rank makes the same call in the same order (token counts and index
// types may differ across ranks), and a rank's refusal of its own arguments is raised on every rank
// (detail::checked_alike), before anything runs.
template <class F>
static void checked(Communicator& comm, const char* what, const char* call, F&& local_checks) {
  symmem::detail::checked_alike(comm, what, [call] { return std::string("call=") + call; }, local_checks);
}

void ExpertParallel::check_in(const DispatchIn& in) const {
  require(in.tokens >= 0 && in.tokens <= cfg_.max_tokens,
          "moe dispatch: tokens=", in.tokens, " must be in [0, max_tokens=", cfg_.max_tokens, "]");
  if (in.tokens > 0) {
    require(in.x != nullptr && in.topk_idx != nullptr, "moe dispatch: x and topk_idx must be device pointers");
    require(!cfg_.fp8 || in.scales != nullptr, "moe dispatch: an fp8 dispatch needs scales (fp32 [T, ceil(H/128)], or packed UE8M0)");
    require_aligned(in.x, "x");
  }
}
void ExpertParallel::check_out(const DispatchOut& out) const {
  require(out.recv_x != nullptr && out.expert_counts != nullptr, "moe dispatch: recv_x and expert_counts must be device pointers");
  require(!cfg_.fp8 || out.recv_scales != nullptr, "moe dispatch: an fp8 dispatch needs recv_scales [E_local, capacity, scale words]");
  require_aligned(out.recv_x, "recv_x");
}

// The grids of a kind of round, from the layout and the agreed grid facts alone (a round's worst
// case, not this rank's tokens): a receiver counts the blocks of every sender's send half. send:
// a send half alone; recv: a receive half alone; both: one grid for both halves (one kernel a
// round, or a pipelined round). Dispatch sends a block per token; combine a warp per (row, segment).
struct Grids {
  int send, recv, both;
};
static Grids grids_of(long long send_warps, long long recv_warps, int sms, int resident) {
  return {blocks_for(send_warps, sms, resident), blocks_for(recv_warps, sms, resident), blocks_for(std::max(send_warps, recv_warps), sms, resident)};
}

// Self-direct: a send half given the outputs writes this rank's own rows straight into its experts,
// and its receive half skips them (dispatch.cu, send_rows). Rank-local: a rank's own rows never
// cross the links, so ranks need not agree on it. Taken by one kernel a round (`one_kernel`) over
// several rounds, where a block sends several tokens and its own rows' writes run beside its next
// tokens' stores (2 x H100, session 16, prefill 253.8 -> 226.5 us; its last token's after its
// flags, send_own_rows), and by one kernel at one round of at least kSelfDirectTokens tokens from
// 3 ranks on (4 x H200, session 17, three calls: decode dispatch 20.85 -> 20.36 us, skewed 21.03
// -> 20.84; pplx's 128-token shape level; its 1-token shapes 0.2-0.9 us slower, so they stay
// staged: a lone block's own-row writes lengthen the one block everything waits for). Elsewhere it
// measured no better: at 2 ranks the one-kernel decode dispatch level or 0.5 us slower and 1-token
// shapes 0.3-0.9 us slower (again on 2 x H200 in session 39, both in one call: decode skewed 13.35
// against 12.80 us; only pplx's 64-expert 128-token uniform shape gained, 10.34 against 11.24);
// the pipelined rounds 28 us slower at their default split.
// kSelfDirect / kSelfStaged force it either way, for measurements.
constexpr int kSelfDirectTokens = 32;  // (measured at 1 and 128; a block a token either way)
static bool self_direct(const kern::Layout& L, bool one_kernel) {
  if ((L.tune & kern::kSelfStaged) != 0) return false;
  if ((L.tune & kern::kSelfDirect) != 0) return true;
  return one_kernel && (L.rounds > 1 || (L.n >= 3 && L.round >= kSelfDirectTokens));
}
static kern::DispatchArgs dispatch_args(const kern::Layout& L, const DeviceHandle& h, const DispatchIn* in, int j, int tokens, int experts,
                                        const DispatchOut* out) {
  kern::DispatchArgs sa{h, L, round_of(L, j, tokens), nullptr, nullptr, nullptr, false, nullptr, tokens, experts, nullptr, nullptr};
  if (in != nullptr && out != nullptr) {
    sa.recv_x = static_cast<char*>(out->recv_x);
    sa.recv_scales = static_cast<uint32_t*>(out->recv_scales);
  }
  if (in != nullptr) {
    sa.x = static_cast<const char*>(in->x);
    sa.scales = static_cast<const uint32_t*>(in->scales);
    sa.topk_idx = in->topk_idx;
    sa.idx_int64 = in->idx_int64;
    sa.weights = in->topk_weights;
  }
  return sa;
}
static kern::DispatchRecvArgs dispatch_recv_args(const kern::Layout& L, const DeviceHandle& h, const DispatchOut* out, int j, int tokens,
                                                 int senders, bool direct) {
  kern::DispatchRecvArgs ra{h, L, round_of(L, j, tokens), senders, nullptr, nullptr, nullptr, direct};
  if (out != nullptr) {
    ra.recv_x = static_cast<char*>(out->recv_x);
    ra.recv_scales = static_cast<uint32_t*>(out->recv_scales);
    ra.expert_counts = out->expert_counts;
  }
  return ra;
}

// Round j of a dispatch: its send half (in given), its receive half (out given), or both, as two
// kernels or, with dispatch_one, as one (a grid for both halves, within what stays resident).
void ExpertParallel::dispatch_round(const DispatchIn* in, const DispatchOut* out, int j, cudaStream_t stream) {
  const kern::Layout& L = impl_->L;
  if (L.ll) {  // one small round through lines: send blocks a token, receive blocks a (source, row) slot
    const kern::DispatchArgs sa = dispatch_args(L, impl_->buf.handle(), in, 0, impl_->last_tokens, cfg_.num_experts, nullptr);
    kern::DispatchRecvArgs ra = dispatch_recv_args(L, impl_->buf.handle(), out, 0, impl_->last_tokens, 0, false);
    ra.after_send = in != nullptr;  // (the receive kernel right after this send kernel: beside it)
    const int blocks = nranks_ * L.round + 1;  // (the last one publishes the counts)
    if (in != nullptr) kern::launch_dispatch_ll_send(sa, L.round, stream);
    if (out != nullptr) kern::launch_dispatch_ll_recv(ra, blocks, stream);
    return;
  }
  const Grids g = grids_of(static_cast<long long>(L.round) * (kern::kThreads / 32), static_cast<long long>(nranks_) * L.round, impl_->sms,
                           impl_->resident_blocks);
  const int senders = impl_->dispatch_one ? g.both : g.send;
  // Self-direct only where both halves are in this call (dispatch, not dispatch_send / dispatch_recv).
  const bool direct = in != nullptr && out != nullptr && self_direct(L, impl_->dispatch_one);
  const kern::DispatchArgs sa = dispatch_args(L, impl_->buf.handle(), in, j, impl_->last_tokens, cfg_.num_experts, direct ? out : nullptr);
  const kern::DispatchRecvArgs ra = dispatch_recv_args(L, impl_->buf.handle(), out, j, impl_->last_tokens, senders, direct);
  if (in != nullptr && out != nullptr && impl_->dispatch_one) {
    kern::launch_dispatch(sa, ra, g.both, stream);
    return;
  }
  if (in != nullptr) kern::launch_dispatch_send(sa, senders, stream);
  if (out != nullptr) kern::launch_dispatch_recv(ra, g.recv, stream);
}

// The blocks of a pipelined round's grid that store the next round (the rest finish this round at
// the same time), or 0: every block does both. Rank-local: the flags count every block either way.
static int send_blocks_of(int blocks, int share) {
  if (share <= 0 || share >= 100 || blocks < 2) return 0;
  return std::clamp((blocks * share + 50) / 100, 1, blocks - 1);
}

// Several rounds, pipelined (moe_kernels.hpp): send(0), then a kernel a round j that receives j
// and sends j + 1. Round 0's flags count send(0)'s blocks, the later rounds' the pipelined grid's.
void ExpertParallel::dispatch_pipelined(const DispatchIn& in, const DispatchOut& out, cudaStream_t stream) {
  const kern::Layout& L = impl_->L;
  const Grids g = grids_of(static_cast<long long>(L.round) * (kern::kThreads / 32), static_cast<long long>(nranks_) * L.round, impl_->sms,
                           impl_->resident_blocks);
  const DeviceHandle h = impl_->buf.handle();
  const int T = impl_->last_tokens;
  const bool direct = self_direct(L, false);
  kern::launch_dispatch_send(dispatch_args(L, h, &in, 0, T, cfg_.num_experts, direct ? &out : nullptr), g.send, stream);
  for (int j = 0; j < L.rounds; ++j) {
    const bool next = j + 1 < L.rounds;
    kern::launch_dispatch_pipe(dispatch_args(L, h, &in, next ? j + 1 : j, T, cfg_.num_experts, direct ? &out : nullptr),
                               dispatch_recv_args(L, h, &out, j, T, j == 0 ? g.send : g.both, direct), next, g.both,
                               send_blocks_of(g.both, impl_->send_share), stream);
  }
}

// An operation of several rounds as one streamed kernel (dispatch_ring.cu): every token at once,
// this rank's own rows straight into its experts; a share of the grid sends (ring_share, or
// SYMMEM_MOE_SEND_SHARE; rank-local: no peer counts this rank's blocks), the rest copies.
void ExpertParallel::dispatch_ring(const DispatchIn& in, const DispatchOut& out, cudaStream_t stream) {
  const kern::Layout& L = impl_->L;
  const DeviceHandle h = impl_->buf.handle();
  const int T = impl_->last_tokens, B = impl_->ring_blocks;
  kern::DispatchArgs sa = dispatch_args(L, h, &in, 0, T, cfg_.num_experts, &out);
  sa.r = kern::Round{0, 0, T, true, true};
  const kern::DispatchRecvArgs ra = dispatch_recv_args(L, h, &out, 0, T, 0, true);
  const int share = impl_->ring_share > 0 && impl_->ring_share < 100 ? impl_->ring_share : ring_share_for(nranks_);
  const int send_blocks = std::clamp((B * share + 50) / 100, 1, B - ring_copy_blocks_min(nranks_));
  kern::launch_dispatch_ring(sa, ra, B, send_blocks, stream);
}

void ExpertParallel::dispatch_send(const DispatchIn& in, cudaStream_t stream) {
  symmem::detail::CallScope call("symmem moe dispatch_send", comm_.context().device());
  checked(comm_, "moe dispatch_send", "dispatch_send", [&] {
    require(impl_->L.rounds == 1, "moe dispatch_send: with round_tokens < max_tokens the halves cannot run apart; call dispatch");
    check_in(in);
  });
  impl_->last_tokens = in.tokens;
  dispatch_round(&in, nullptr, 0, stream);
}

void ExpertParallel::dispatch_recv(const DispatchOut& out, cudaStream_t stream) {
  symmem::detail::CallScope call("symmem moe dispatch_recv", comm_.context().device());
  checked(comm_, "moe dispatch_recv", "dispatch_recv", [&] {
    require(impl_->L.rounds == 1, "moe dispatch_recv: with round_tokens < max_tokens the halves cannot run apart; call dispatch");
    check_out(out);
  });
  dispatch_round(nullptr, &out, 0, stream);
}

void ExpertParallel::dispatch(const DispatchIn& in, const DispatchOut& out, cudaStream_t stream) {
  symmem::detail::CallScope call("symmem moe dispatch", comm_.context().device());
  checked(comm_, "moe dispatch", "dispatch", [&] {
    check_in(in);
    check_out(out);
  });
  impl_->last_tokens = in.tokens;
  if (impl_->ring) {
    dispatch_ring(in, out, stream);
    return;
  }
  if (impl_->L.rounds > 1 && !impl_->dispatch_one) {
    dispatch_pipelined(in, out, stream);
    return;
  }
  for (int j = 0; j < impl_->L.rounds; ++j) dispatch_round(&in, &out, j, stream);
}

// Round j of a combine: its send half (expert_out given), its receive half (recv), or both.
void ExpertParallel::combine_round(const void* expert_out, bool weighted, void* out, bool recv, int j, cudaStream_t stream) {
  const kern::Layout& L = impl_->L;
  const kern::Round r = round_of(L, j, impl_->last_tokens);
  if (L.ll) {  // after a lines dispatch: partial rows as lines, a warp a (row, segment) sent and a (token, segment) summed
    const long long segs = kern::row_segments(L);
    const Grids g = grids_of(nranks_ * L.round * segs, L.round * segs, impl_->sms, impl_->ll_resident);
    const kern::CombineArgs sa{impl_->buf.handle(), L, r, static_cast<const char*>(expert_out), weighted, nullptr, impl_->last_tokens, 0};
    const kern::CombineArgs ra{impl_->buf.handle(), L, r, nullptr, false, static_cast<char*>(out), impl_->last_tokens, 0};
    if (expert_out != nullptr && recv && impl_->one_kernel) {  // (a warp may wait for lines of another block: g.both stays resident)
      kern::launch_combine_ll(sa, ra, g.both, stream);
      return;
    }
    if (expert_out != nullptr) kern::launch_combine_ll_send(sa, g.send, stream);
    if (recv) kern::launch_combine_ll_recv(ra, g.recv, stream);
    return;
  }
  const Grids g = grids_of(static_cast<long long>(nranks_) * L.round * kern::row_segments(L), static_cast<long long>(L.round) * kern::row_segments(L), impl_->sms,
                           impl_->resident_blocks);
  const int senders = impl_->one_kernel ? g.both : g.send;
  const kern::CombineArgs sa{impl_->buf.handle(), L, r, static_cast<const char*>(expert_out), weighted, nullptr, impl_->last_tokens, senders};
  const kern::CombineArgs ra{impl_->buf.handle(), L, r, nullptr, false, static_cast<char*>(out), impl_->last_tokens, senders};
  if (expert_out != nullptr && recv && impl_->one_kernel) {
    kern::launch_combine(sa, ra, g.both, stream);
    return;
  }
  if (expert_out != nullptr) kern::launch_combine_send(sa, senders, stream);
  if (recv) kern::launch_combine_recv(ra, g.recv, stream);
}

// Several rounds, pipelined, as dispatch_pipelined.
void ExpertParallel::combine_pipelined(const void* expert_out, bool weighted, void* out, cudaStream_t stream) {
  const kern::Layout& L = impl_->L;
  const Grids g = grids_of(static_cast<long long>(nranks_) * L.round * kern::row_segments(L), static_cast<long long>(L.round) * kern::row_segments(L), impl_->sms,
                           impl_->resident_pipe);  // (round 0's send kernel may take two waves: no block of it waits for another)
  const DeviceHandle h = impl_->buf.handle();
  const int T = impl_->last_tokens;
  auto args = [&](int j, int senders) {
    return kern::CombineArgs{h, L, round_of(L, j, T), static_cast<const char*>(expert_out), weighted, static_cast<char*>(out), T, senders};
  };
  kern::launch_combine_send(args(0, g.send), g.send, stream);
  for (int j = 0; j < L.rounds; ++j) {
    const bool next = j + 1 < L.rounds;
    kern::launch_combine_pipe(args(next ? j + 1 : j, g.both), args(j, j == 0 ? g.send : g.both), next, g.both,
                              send_blocks_of(g.both, impl_->send_share), stream);
  }
}

// The combine of a streamed dispatch as one streamed kernel (combine_ring.cu): a share of the grid
// sends partial rows (comb_share_for, or SYMMEM_MOE_COMBINE_SHARE / SYMMEM_MOE_SEND_SHARE;
// rank-local: no peer counts this rank's blocks), the rest sums this rank's tokens. (Session 22
// raised a share below 60 to 60 and kept at most 106 sum blocks: the summers' polling made it fall
// off a cliff there, fixed in combine_ring.cu.)
void ExpertParallel::combine_ring(const void* expert_out, bool weighted, void* out, cudaStream_t stream) {
  const kern::Layout& L = impl_->L;
  const int B = impl_->cring_blocks, T = impl_->last_tokens;
  const int share = impl_->comb_share > 0 && impl_->comb_share < 100 ? impl_->comb_share : comb_share_for(nranks_);
  const int send_blocks = std::clamp((B * share + 50) / 100, cring_send_blocks_min(nranks_), B - 1);
  const kern::CombineArgs a{impl_->buf.handle(), L, round_of(L, 0, T), static_cast<const char*>(expert_out), weighted, static_cast<char*>(out), T, 0};
  kern::launch_combine_ring(a, B, send_blocks, stream);
}

static void check_expert_out(const void* expert_out) {
  require(expert_out != nullptr, "moe combine: expert_out must be a device pointer [E_local, capacity, H] bf16");
  require_aligned(expert_out, "expert_out");
}
static void check_combine_out(const void* out, int tokens) {
  require(out != nullptr || tokens == 0, "moe combine: out must be a device pointer [T, H] bf16");
  if (out != nullptr) require_aligned(out, "out");
}

void ExpertParallel::combine_send(const void* expert_out, bool weighted, cudaStream_t stream) {
  symmem::detail::CallScope call("symmem moe combine_send", comm_.context().device());
  checked(comm_, "moe combine_send", "combine_send", [&] {
    require(impl_->L.rounds == 1, "moe combine_send: with round_tokens < max_tokens the halves cannot run apart; call combine");
    check_expert_out(expert_out);
  });
  combine_round(expert_out, weighted, nullptr, false, 0, stream);
}

void ExpertParallel::combine_recv(void* out, cudaStream_t stream) {
  symmem::detail::CallScope call("symmem moe combine_recv", comm_.context().device());
  checked(comm_, "moe combine_recv", "combine_recv", [&] {
    require(impl_->L.rounds == 1, "moe combine_recv: with round_tokens < max_tokens the halves cannot run apart; call combine");
    check_combine_out(out, impl_->last_tokens);
  });
  combine_round(nullptr, false, out, true, 0, stream);
}

void ExpertParallel::combine(const void* expert_out, void* out, bool weighted, cudaStream_t stream) {
  symmem::detail::CallScope call("symmem moe combine", comm_.context().device());
  checked(comm_, "moe combine", "combine", [&] {
    check_expert_out(expert_out);
    check_combine_out(out, impl_->last_tokens);
  });
  if (impl_->cring) {
    combine_ring(expert_out, weighted, out, stream);
    return;
  }
  if (impl_->L.rounds > 1 && !impl_->one_kernel) {
    combine_pipelined(expert_out, weighted, out, stream);
    return;
  }
  for (int j = 0; j < impl_->L.rounds; ++j) combine_round(expert_out, weighted, out, true, j, stream);
}

}  // namespace symmem::moe
