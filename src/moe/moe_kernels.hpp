#pragma once
// Internal: the layout of the MoE buffer and the kernels' arguments (moe.cpp, dispatch.cu, combine.cu).
//
// An operation (one dispatch and its combine) moves the tokens in rounds of R = round_tokens
// (tokens [jR, jR + R) of every rank in round j; ceil(max_tokens / R) rounds, empty ones included,
// so every rank runs the same number). One round is the low-latency case; more bound the buffers
// for prefill. One symmetric buffer per ExpertParallel, the same layout on every rank:
//   stage  [2][n][R] rows               a round's rows, by (round parity, source); a rank's own
//                                       rows skip it where its send half has the outputs
//                                       (self-direct, dispatch.cu send_rows: their expert rows are
//                                       claimed and written there, their slots in the records)
//   meta   [2][n][max_tokens] Meta      every staged row of the operation, by (operation parity,
//                                       source, arrival order): source token, local experts, weights,
//                                       and the slot each expert gave it (by the sender where it
//                                       claims them, Layout::sender_claims; else by the receiver)
//   expert counters [2][E_local]        rows claimed in each local expert, by operation parity:
//                                       peer-written where senders claim (remote atomics)
//   comb   [2][n][R][H] bf16            a combine round's partial rows, by (round parity, rank)
//   local scratch (peers never touch it): per-round and per-operation send and receive counts,
//                                       each token's destination ranks, block arrival counters.
//   ring words (the streamed dispatch, dispatch_ring.cu, where it runs: the staging area is then
//                                       [n][2R] ring slots): ready [source][2R] and release
//                                       [destination][2R] words and announces [parity][source], written by
//                                       peers; its local state, copy claims, counts by (source,
//                                       round) and by (token group, destination).
// Signal pad (user slots): epochs (local), dispatch flags (parity, source) and combine flags
// (parity, source). A flag counts the sending grids' blocks and is never zeroed: every block of a
// send half, once its own stores are fenced, adds kArrival (plus, for dispatch, the rows it staged
// there) to the flag of every rank, itself included. The receiver keeps, per flag, the value it
// read at the flag's previous round (flag_base, local) and waits until the flag holds `senders`
// more arrivals (a count every rank computes alike from the layout and the grid facts agreed at
// construction; all modulo 2^64); the round's rows are the low bits of the difference. No block
// waits for the others before its flags go out (an election would add a fence and an atomic round
// trip to every step); what needs every block done (the round's send counts and totals, the flag
// bases, the receive epilogue) is done by local elections afterwards, off the peers' path (the
// one-kernel dispatch's last block writes its bookkeeping right after its wait, and its election
// keeps only the expert counts: kOneElectionDispatch, dispatch.cu RecvBook). The one-kernel
// combine has none: there block 0's wait already covers every block of its grid (combine.cu,
// combine_kernel).
//
// Rounds: one round (decode) is a send half, then a receive half. More rounds (prefill) are
// pipelined: send(0), then for each round j one kernel that waits for round j's flags, stores round
// j+1's rows into the peers, finishes with round j's rows (the copy into experts, or the sum into
// out), then adds its round-(j+1) flags: the NVLink stores of j+1 drain under the local work of j.
// The grid is split between the two (a share of blocks stores round j+1 while the rest finishes
// round j; Config-independent and rank-local: every block adds its arrival either way, so the
// flags count the same blocks), so that the links are not idle while a block copies.
//
// Flow control, for any N and any interleaving of the ranks' progress: every dispatch round and
// every combine round is a step in which every rank sends every peer a flag and waits for every
// peer's (rule (R) of the sequenced workspace). Staging alternates by dispatch round, the combine
// area by combine round, the routing records by operation, the flags by round parity. A rank
// writing a parity of one of them for step k + 2 (of its kind) has waited for the peer's flag of
// step k + 1, and every block of the peer adds to that flag only after it has finished with step
// k's rows of that parity (its copy or sum share, and its read of step k's flag value, which is
// exactly step k's: the next add to that slot is a step-(k+2) add). The routing records of
// operation k are read until its last combine round, and the peer sends its dispatch flags of
// operation k + 1 after that (stream order). tests/host/test_moe_model.cpp (one round) and
// test_moe_pipeline_model.cpp (pipelined rounds, cumulative flags; it also shows that zeroing the
// flags in the receive election, or raising round j+1's flags before round j is finished with, can
// break) check the argument under random interleavings.
//
// Expert counters where senders claim (Layout::sender_claims: one round): every sender adds to the
// counter of each expert its token chose, on that expert's rank, before its flags; the owner reads
// them once every flag of the round is in (the adds are ordered before the flags by the senders'
// fences) and zeroes them in the same kernel (the counts' publication). A sender's adds of
// operation k + 2 use the parity of operation k; it makes them only after it has waited for the
// owner's dispatch flag of operation k + 1, which the owner raises in a later kernel than the one
// that published and zeroed operation k's counters (stream order; the halves run send(k),
// recv(k), send(k + 1) on one stream, as the epochs already require). Operation k + 1's adds,
// which may come before the owner has published operation k, go to the other parity.
// test_moe_model.cpp checks it (and that one set of counters, without the parity, can break).
#include <cstddef>
#include <cstdint>

#include "symmem/device/handle.hpp"
#include "symmem/device/workspace.hpp"
#include "symmem/moe.hpp"

namespace symmem::moe::kern {

constexpr int kMaxTopk = 16;
constexpr uint64_t kArrival = 1ull << 40;  // a send block's arrival in a flag; rows in the bits below
constexpr uint64_t kRowsMask = kArrival - 1;
constexpr int kThreads = 256;  // 8 warps: a dispatch token's row is moved by all of them
// The pipelined combine kernel is held to two blocks an SM (at most 128 registers a thread; 157
// left one): its grid then has twice the warps (2 x H100, session 12, both combine kernels held
// so: prefill combine 330 -> 313 us, but decode 19.9 -> 21.3 us, and 20.8 with decode's grid kept
// at a block an SM: the cap itself costs the one-kernel form, so it keeps its registers).
constexpr int kCombinePipeBlocksPerSm = 2;
constexpr int kMaxWarpsPerSm = 32;  // grids up to 32 warps an SM: latency-bound items need many in flight
constexpr int kScaleGroup = 128;  // fp8: one scale per 128 channels
constexpr int kSegBytes = 32 * 16 * 4;  // combine's work item: 4 vectors of 16 bytes per lane
// One-round combines of at most kSmallCombineItems such items (n x R rows of ceil(2H /
// kSegBytes) segments) take items of half that (Layout::seg_bytes; kernels compiled for each
// size): a small grid then has twice the warps loading at once. Session 40, 1 KiB against 2 KiB
// items (every item that size: bench/results/*-s40c2-*, *-s40c7-*; combine us): 4 x H200, pplx's
// 64 experts at 1 token a rank (8 items) 7.76-7.97 against 9.15-9.32, 256 experts (28) 9.14-9.24
// against 9.76-10.10, 64 experts at 128 tokens (1024) 14.42-15.04 against 14.35-14.89, decode
// (3584) 30.8-33.0 against 26.8-30.1; 2 x H200, 7.49-7.59 against 8.17-8.38 (4), 8.24-8.54
// against 8.29-9.15 (14), 10.43-10.81 against 10.63-11.08 (512), decode (1792) 19.7 against
// 15.9. 4 KiB items were slower everywhere (s40c3). This rule beside the 2 KiB items, 4 x H200
// (*-s40c8-*): 7.79-8.21 against 8.99-9.40 us at 64 experts, 9.11-9.36 against 10.02-10.35 at
// 256, the rest level.
constexpr int kSmallCombineItems = 512;
// One-round dispatches of few tokens travel as LL lines (Layout::ll, dispatch_ll.cu), and so do
// their combines (combine_ll.cu): no fence, flag word or remote atomic on their path, but lines
// carry 2x (narrow) or 4/3 (wide, llc_payload_for) of a row's bytes. Rounds of at most kLLTokens
// tokens a rank take them at any team size; up to kLLMaxTokens (the kernels' limit: a warp's lanes
// hold the round's tokens) at up to 4 ranks where R x H is at most ll_channels_for (make_layout).
// Session 42 measured the first crossovers (*-s42c3-*: 4 GPUs, 64 experts at 16 tokens and 2
// GPUs, 256 experts at 16, 64 at 32); session 43's coalesced combine moved them (below).
// SYMMEM_MOE_LL_TOKENS=N (a compared setting) takes them up to N tokens instead, for measurements.
constexpr int kLLTokens = 8;
constexpr int kLLMaxTokens = 32;
/// The most R x H (tokens a round x hidden) that takes the lines beyond kLLTokens at n ranks (0:
/// none; not measured above 4 ranks). Session 43 (4 x H200, bench/results/*-s43c1-*, *-s43c4-*,
/// *-s43c5-*; pair us, lines against staged): 4 GPUs, 64 experts at 16 and 32 tokens 14.7 / 17.4
/// against 20.3 / 20.6, 256 experts at 16 17.4 against 22.6, at 32 26.4 against 25.8; 2 GPUs, 256
/// experts at 32 tokens 16.5 against 20.7. Session 44 (*-s44c1-*: the two-kernel lines dispatch,
/// both in one call): 4 GPUs, 256 experts at 32 tokens 24.3 / 24.2 (uniform / skewed) against
/// 25.8 / 26.2, so 3-4 ranks take the 2-rank limit.
inline SYMMEM_HOST_DEVICE long long ll_channels_for(int n) { return n <= 4 ? 262144 : 0; }
constexpr int kLLMaxExperts = 1024;  // local experts the lines' publisher counts in shared memory
// The lines combine's work item: a lane's vectors in kLLCLaneLines lines, so a segment is
// kLLCSegLines lines (1 KiB of a row in narrow lines, 1.5 KiB in wide ones; combine_ll.cu).
constexpr int kLLCLaneLines = 4;
constexpr int kLLCSegLines = 32 * kLLCLaneLines;
/// The lines combine's payload bytes a line (ws::kLLNarrow or ws::kLLPayload) for R bf16 rows of
/// `row` bytes each at n ranks (every rank alike): narrow lines (one aligned word pair a line) for
/// few bytes, wide ones (16/12 of the row on the links, against 2x) where R x row x (n - 1)
/// reaches 384 KiB. 4 x H200, session 43 (bench/results/*-s43c1-*, combine us, narrow / wide): 4
/// GPUs, 64 experts (4 KiB rows) at 1, 8 and 16 tokens 4.99 / 5.43, 5.50 / 5.56, 6.20 / 6.30, at
/// 32 6.67 / 6.52; 256 experts (14 KiB) at 1 and 8 tokens 5.62 / 6.19, 6.28 / 6.50, at 16 and 32
/// 8.49 / 7.95, 13.94 / 12.23; 2 GPUs, 256 experts at 16 tokens 5.97 / 6.41, at 32 7.80 / 7.22.
/// (The dispatch's row lines stay narrow: wide ones measured slower at every shape that takes the
/// lines, *-s43c2-*: 4 GPUs, 64 experts at 32 tokens 10.90 against 10.86 us, 1 token 7.05 against
/// 6.81; 2 GPUs 0.5-0.9 us slower.)
/// (Not the collectives' ws::ll_payload_for, whose rule is per peer message.)
inline int llc_payload_for(int n, int R, long long row) {
  return static_cast<int>(static_cast<long long>(R) * row * (n - 1) >= 393216 ? ws::kLLPayload : ws::kLLNarrow);
}
// Local counters at arrive_off: the elections' arrivals (0: dispatch send, 1: dispatch receive,
// 2: combine send, 3: combine receive; 0 unused by the one-kernel dispatch with
// kOneElectionDispatch, 2 and 3 by the one-kernel combine), then the work claims of a split
// pipelined round.
constexpr int kCopyClaims = 4, kSumClaims = 5, kCounters = 6;

// A routing record: entries k < K are written by the sender (expert, weight) and by the receiver
// (slot); entries from K on are neither written nor read (fewer bytes on the links).
struct Meta {
  int32_t src_token;
  int32_t pad_[3];
  int32_t expert[kMaxTopk];  // local expert id, or -1
  float weight[kMaxTopk];
  int32_t slot[kMaxTopk];    // row in recv_x of that expert (sender-written where it claims, Layout::sender_claims, and for its own rows where self-direct; else receiver-written), -1: dropped
};
static_assert(sizeof(Meta) % 16 == 0, "Meta rows stay 16-byte aligned");

// Signal pad slots (local).
constexpr int kEpochSlot = 0;         // dispatch round epoch: the last finished round's
constexpr int kCombinedSlot = 1;      // the operation whose combine last finished: one combine per dispatch
constexpr int kOpSlot = 2;            // operation epoch: the last started dispatch's
constexpr int kCombineEpochSlot = 3;  // combine round epoch: the last finished round's
inline constexpr int dispatch_flag(int parity, int src) { return 8 + parity * pad::kMaxTeam + src; }
inline constexpr int combine_flag(int parity, int src) { return 8 + 2 * pad::kMaxTeam + parity * pad::kMaxTeam + src; }
// Over capacity on one rank is reported on every rank: that rank's last dispatch round marks
// every peer's overflow slot with the operation; a peer reports a mark it has not reported yet
// in its combine of that operation or, failing that, its next dispatch (both wait for a flag
// the marking rank raises after the mark, so the mark is visible by then).
inline constexpr int overflow_flag(int src) { return 8 + 4 * pad::kMaxTeam + src; }
// flag_base[kind][parity][src]: the value a flag held at its previous round (kind 0 dispatch, 1 combine).
inline constexpr size_t flag_base_index(int kind, int parity, int src) { return (static_cast<size_t>(kind) * 2 + parity) * pad::kMaxTeam + src; }
constexpr int kOverflowSeenSlot = 4;  // the last operation whose peer overflow was reported here
// A bad expert index (outside [0, E), not -1) on one rank is reported on every rank the same way:
// its senders note it in the local slot kBadIndexSlot, the dispatch's publishing block (the one
// that marks the overflow) clears it and marks every peer's bad_index_flag slot with the
// operation, and a peer reports a mark it has not reported yet (kBadIndexSeenSlot) where it
// reports the overflow marks.
inline constexpr int bad_index_flag(int src) { return 8 + 5 * pad::kMaxTeam + src; }
constexpr int kBadIndexSlot = 5;      // (local) a sender met a bad expert index in the running operation
constexpr int kBadIndexSeenSlot = 6;  // the last operation whose peer's bad index was reported here
static_assert(8 + 6 * pad::kMaxTeam <= pad::kUserSlots, "MoE flags fit the user slots");

/// Layout::tune bits (rank-local; SYMMEM_MOE_TUNE overrides the default, for measurements).
/// kSpreadCopy: the dispatch copy's warps take their rows block-major (Part::warp_spread), so that a
/// decode batch's few hundred rows reach every SM (2 x H100, session 12: decode dispatch 19.0 ->
/// 15.4 us on one machine, 19.6 -> 17.1 on another; prefill unchanged). kOneElectionDispatch: the
/// one-kernel dispatch has no send-half election (1-token shapes 0.7-0.9 us less, decode
/// unchanged), and its last block does the receive election's bookkeeping but the expert counts
/// right after its wait (RecvBook). The same two for combine measured no difference and were not kept.
enum TuneBits : unsigned {
  kSpreadCopy = 1,
  kOneElectionDispatch = 2,
  kSelfDirect = 4,  // (measurement) self-direct wherever the send half has the outputs (moe.cpp, self_direct)
  kSelfStaged = 8,  // (measurement) never self-direct
  kOwnInLoop = 16,  // (measurement) self-direct: a block's last token's own rows before its flags too (dispatch.cu)
  // The streamed dispatch's copy (dispatch_ring.cu, ring_copy) moves a row by the bulk-copy unit
  // through a shared-memory stage a warp (sm_90 on), its slot released once the row is in shared
  // memory; without the bit, by loads and stores, the release after them. 4 x H200, prefill,
  // session 25, two calls (bench/results/2026-11-27-h200x4-*-s25c{1,2}-*): at 2 GPUs 127.6-127.9 us
  // against 129.4-129.7 (skewed 141.2-141.6 against 144.1-144.6); at 4 GPUs level uniform
  // (279.3-280.0 against 279.2-280.4), skewed 289.3-290.6 against 291.8-292.5. 4 x H100 (call 7,
  // ...-h100x4-8a13d42-s25c7-*, with 65% sending at 2 GPUs): 2 GPUs 149.7-149.8 against 154.5-154.6,
  // 4 GPUs 281.9 against 282.8-283.2; the combine after it 1-2 us slower at 4 GPUs on both cards
  // (the pair level there). (Released after the loads, before the register copy's stores: 279.7,
  // level.)
  kRingCopyBulk = 64,
  // (measurement) senders a warp a token at any rank count (send_tokens_by_warp, the two-rank
  // way). Session 25, 4 x H200, prefill at 4 GPUs: 285.7 us against the block groups' 280.4
  // (skewed 313.8 against 291.7); with the bulk copy 283.7 (302.5). (Session 25 also measured
  // the block-group senders moving each token's row by the bulk-copy unit, a warp a token, every
  // store complete before the group's fence: 309.5 us against 280, skewed 309 against 290, at
  // send shares of 50-70% 304.6-315.8; commit c824209 holds it, as tune bit 32. Pipelined, a
  // token's ready words one wave later (every pending token published before a block waits on a
  // release): 324.6-325.9 against 279.8-279.9, skewed 319.5-320.0 against 289.4-289.6, 50% 317.0,
  // 70% 328.9; commit 1d01f83 holds that one.)
  kRingWarpSenders = 128,
  kTuneDefault = kSpreadCopy | kOneElectionDispatch | kRingCopyBulk,
};

// Streamed dispatch (dispatch_ring.cu): tokens a group (a send block's unit), the most blocks.
constexpr int kRingGroup = 4;
constexpr int kRingMaxBlocks = 2048;
/// The streamed dispatch's local state at Layout::ring_state_off (uint64 words): per destination the
/// rows sent to it over every operation so far, per source the rows copied from it, this
/// operation's rows out and in (for the close), and the send blocks' barrier count. Then what the
/// streamed combine reads (combine_ring.cu): the last operation's rows to each rank and from each
/// rank (this rank's own rows in both at index rank), per rank the partial rows sent to it and
/// received from it over every streamed combine so far, its send pools' claims and its token claim.
struct RingState {
  static SYMMEM_HOST_DEVICE int sent(int, int d) { return d; }
  static SYMMEM_HOST_DEVICE int recv(int n, int s) { return n + s; }
  static SYMMEM_HOST_DEVICE int out(int n, int d) { return 2 * n + d; }
  static SYMMEM_HOST_DEVICE int in(int n, int s) { return 3 * n + s; }
  static SYMMEM_HOST_DEVICE int barrier(int n) { return 4 * n; }
  static SYMMEM_HOST_DEVICE int last_out(int n, int d) { return 4 * n + 1 + d; }
  static SYMMEM_HOST_DEVICE int last_in(int n, int s) { return 5 * n + 1 + s; }
  static SYMMEM_HOST_DEVICE int csent(int n, int d) { return 6 * n + 1 + d; }
  static SYMMEM_HOST_DEVICE int crecv(int n, int s) { return 7 * n + 1 + s; }
  static SYMMEM_HOST_DEVICE int cclaim(int n, int d) { return 8 * n + 1 + d; }
  static SYMMEM_HOST_DEVICE int ctoken(int n) { return 9 * n + 1; }
  static SYMMEM_HOST_DEVICE int words(int n) { return 9 * n + 2; }
};

struct Layout {
  int n = 1, hidden = 0, topk = 0, experts_local = 0, max_tokens = 0, capacity = 0;
  int round = 0, rounds = 1;  // tokens per round, rounds per operation
  // One round (and SYMMEM_MOE_SENDER_CLAIMS not 0, a compared setting): the dispatch's senders
  // claim each row's expert rows on its destination (remote atomics on the expert counters) and
  // write the slots into its routing record, so the receive copy only reads them and no election
  // precedes the one-kernel dispatch's counts (dispatch.cu, send_rows and CopyRow). Else the
  // receive copy claims them.
  bool sender_claims = false;
  bool fp8 = false;
  int scale_words = 0;  // 32-bit scale words per row (moe::detail::scale_words)
  size_t row = 0;  // staged row bytes
  size_t stage_off = 0, meta_off = 0, comb_off = 0, send_count_off = 0, sent_total_off = 0, token_ranks_off = 0,
         expert_count_off = 0, recv_total_off = 0, round_counts_off = 0, arrive_off = 0, trace_off = 0, flag_base_off = 0,
         bytes = 0;
  // Streamed dispatch (dispatch_ring.cu): ready words [source][S] and release words [destination][S]
  // (peer-written), announces [operation parity][source] (peer-written), then local: RingState, copy claims [source],
  // rows per (source, round), rows per (token group, destination).
  size_t ring_ready_off = 0, ring_release_off = 0, ring_announce_off = 0, ring_state_off = 0, ring_claims_off = 0, ring_rc_off = 0,
         ring_gc_off = 0;
  // Streamed combine (combine_ring.cu; the combine area seen as [source][S] partial rows): ready
  // words [sender][S] and release words [source][S] (peer-written), and each token's row number
  // among this rank's rows to each rank in the last streamed dispatch, [token][rank] (local).
  size_t cring_ready_off = 0, cring_release_off = 0, token_q_off = 0;
  bool trace = false;  // SYMMEM_MOE_TRACE=1: the kernels stamp their phases (TracePoint) at trace_off
  // Sleep between polls of the peers' flags: one kernel a round, whose early blocks wait beside
  // blocks still sending (a prefill combine of one kernel a round: 7.8 ms without, 1.4 ms with 200 ns),
  // and pipelined rounds (SYMMEM_MOE_BACKOFF_NS overrides it), else 0.
  unsigned backoff_ns = 0;
  // Rank-local work placement (TuneBits; never part of a protocol, so ranks may differ):
  // SYMMEM_MOE_TUNE overrides the default, for measurements.
  unsigned tune = 0;
  // The streamed kernels' ring slots per source (make_layout: from n and R, so every rank's agree).
  uint32_t ring_rows = 0;
  // The one-round combines' work item in bytes of a bf16 row: kSegBytes, or half of it for a
  // small combine (kSmallCombineItems; make_layout, so every rank's grid agrees). The pipelined
  // and streamed combines always take kSegBytes.
  int seg_bytes = kSegBytes;
  // One small round (kLLTokens, ll_channels_for; SYMMEM_MOE_LL_TOKENS and SYMMEM_MOE_LL=0, both
  // compared, override the rule): the dispatch travels as LL lines (dispatch_ll.cu) through slots
  // [2][n][R] of ll_slot_lines lines (line 0, K routing lines, the row and its scale words as
  // narrow lines) at ll_off.
  bool ll = false;
  uint32_t ll_slot_lines = 0;
  size_t ll_off = 0;
  size_t ll_ops_off = 0, ll_base_off = 0;  // (local) the blocks' op counters [2][n R + 1], the claim bases [4][E_local]
  // The combine after a lines dispatch (combine_ll.cu), at llc_off: header lines [2][n] by
  // (operation parity, sender), then slots [2][n][R] of llc_slot_lines lines (a bf16 partial row as
  // lines of llc_payload bytes: ws::kLLNarrow or ws::kLLPayload, llc_payload_for; kLLCSegLines lines a
  // segment of seg_bytes) by (operation parity, sender, the row's index among this rank's rows to
  // the sender: its dispatch slot there). Local at llc_marks_off: each block's last combined
  // operation, [2][llc_blocks] (role 0 the send kernel's blocks, 1 the receive or both halves').
  uint32_t llc_slot_lines = 0, llc_blocks = 0, llc_payload = 8;
  size_t llc_off = 0, llc_marks_off = 0;
  SYMMEM_HOST_DEVICE size_t elem() const { return fp8 ? 1 : 2; }
};
/// Combine's work items of a bf16 row: its segments of L.seg_bytes.
inline SYMMEM_HOST_DEVICE int row_segments(const Layout& L) {
  return static_cast<int>((static_cast<long long>(L.hidden) * 2 + L.seg_bytes - 1) / L.seg_bytes);
}
/// The streamed dispatch's (and combine's) ring slots per source: at most the staging area's 2 x R
/// rows a source (make_layout says how many).
inline SYMMEM_HOST_DEVICE uint64_t ring_slots(const Layout& L) { return static_cast<uint64_t>(L.ring_rows); }
/// Above two ranks the rings hold at most this many slots a source: 4 x H100, prefill (7 KiB
/// rows, R 1024), dispatch 283.4 us at 1024 slots against 287.7 at 2048, 295.8 at 768 and 356 at
/// 512 (fewer slots stall the senders; more leave (n - 1) x S rows that no longer stay in L2 while
/// they wait for their copy); at two ranks 1024 was slower (159.0 against 154.7), so 2 x R there.
constexpr uint32_t kRingRowsWide = 1024;
// ll_tokens: -1, small rounds travel as LL lines by the rule at kLLTokens; N >= 0, one round of at
// most N tokens does (0: never, as SYMMEM_MOE_LL=0 gives; at most kLLMaxTokens).
// ll_payload: 0, the lines combine's format by llc_payload_for; ws::kLLNarrow or ws::kLLPayload
// forces one (SYMMEM_MOE_LL_WIDE).
SYMMEM_API Layout make_layout(const Config& c, int nranks, int ll_tokens = -1, int ll_payload = 0);  // (exported for the host tests)

/// Phase stamps (%globaltimer, ns) of the last dispatch and combine round, written when
/// Layout::trace is set (a debugging aid: no profiler reads the lent machines' counters). Each is
/// written by block 0 (a kernel half's start, its own work done, its stores fenced, its flags
/// added, its wait for the peers' flags) or by the elected last block of a receive half (every
/// block's work done, its epilogue done). The one-kernel dispatch whose senders claim elects no
/// block: its receive half's stamps are all its last block's (the one that publishes the counts).
/// The lines dispatch stamps only in its kernels for rounds over kLLTokens tokens (kMany): send
/// block 0's start, its stores issued, its end (fenced and flags raised alike: it has neither);
/// receive block 0 (slot of source 0, row 0) at its start, its line 0 and routing in, its row
/// stored; the publisher once it has every routing line (elected) and at its end (done). Send
/// block 0 also stamps kLinesRouted (every warp's routing in), kLinesCounted (the slots counted)
/// and kLinesHeaders (its own empty-slot and header lines issued; thread 0's).
enum TracePoint : int {
  kDispSendStart = 0, kDispSendFenced, kDispFlagsRaised, kDispRecvStart, kDispRecvFlagsIn, kDispRecvElected,
  kDispRecvDone, kCombSendStart, kCombSendFenced, kCombFlagsRaised, kCombRecvStart, kCombRecvFlagsIn,
  kCombRecvDone,
  // Block 0's own work done (before its fence, or its arrival at the receive half's election).
  kDispSendWorked, kDispRecvWorked, kCombSendWorked, kCombRecvWorked,
  kLinesRouted, kLinesCounted, kLinesHeaders, kTracePoints
};

/// Which round of the operation a launch runs: tokens [t0, t1) of this rank.
struct Round {
  int index, t0, t1;
  bool first, last;
};

struct DispatchArgs {
  DeviceHandle h;  // the MoE buffer
  Layout L;
  Round r;
  const char* x;
  const uint32_t* scales;
  const void* topk_idx;
  bool idx_int64;
  const float* weights;
  int tokens;
  int num_experts;
  // Self-direct (set where the send half is given the outputs): rows to this rank go straight into
  // its experts (dispatch.cu, send_rows); nullptr: they are staged like every other rank's.
  char* recv_x;
  uint32_t* recv_scales;
};
struct DispatchRecvArgs {
  DeviceHandle h;
  Layout L;
  Round r;
  int senders;  // blocks of every rank's send half this round: the arrivals a flag counts
  char* recv_x;
  uint32_t* recv_scales;
  int* expert_counts;
  bool self_direct;  // this rank's send half of the round wrote its own rows into the experts: skip them
  // The lines dispatch's receive kernel right after its send kernel (dispatch(), not the halves
  // called apart): it runs beside it instead of after it (dispatch_ll.cu).
  bool after_send = false;
};
struct CombineArgs {
  DeviceHandle h;
  Layout L;
  Round r;
  const char* expert_out;  // [E_local, capacity, H] bf16
  bool weighted;
  char* out;               // [T, H] bf16 (recv half)
  int tokens;              // this rank's tokens of the last dispatch (recv half)
  int senders;             // blocks of every rank's send half this round (recv half)
};

void launch_dispatch_send(const DispatchArgs& a, int blocks, cudaStream_t s);
void launch_dispatch_recv(const DispatchRecvArgs& a, int blocks, cudaStream_t s);
void launch_combine_send(const CombineArgs& a, int blocks, cudaStream_t s);
void launch_combine_recv(const CombineArgs& a, int blocks, cudaStream_t s);
// One kernel per round (Kernels::kOne, or kAuto at one round): both halves in one grid, which must stay resident.
void launch_dispatch(const DispatchArgs& send, const DispatchRecvArgs& recv, int blocks, cudaStream_t s);
void launch_combine(const CombineArgs& send, const CombineArgs& recv, int blocks, cudaStream_t s);
// Blocks of every dispatch (combine) kernel that stay resident on one SM at once, the least over them.
// Round j's receive half and round j+1's send half (next: j + 1 < rounds) in one kernel (pipelined
// rounds, above).
// send_blocks in (0, blocks): that many blocks store round j+1 while the others finish round j (at
// once); otherwise every block does both, one after the other.
// A dispatch of one small round through LL lines (Layout::ll, dispatch_ll.cu): its send half (R
// blocks) and its receive half (n x R + 1 blocks; beside the send kernel where
// DispatchRecvArgs::after_send).
void launch_dispatch_ll_send(const DispatchArgs& a, int blocks, cudaStream_t s);
void launch_dispatch_ll_recv(const DispatchRecvArgs& a, int blocks, cudaStream_t s);
// The combine after a lines dispatch (Layout::ll, combine_ll.cu): partial rows as LL lines into
// their sources' slots, summed there as they land. Both halves in one grid (which must stay
// resident), or each half alone; every grid at most Layout::llc_blocks blocks.
void launch_combine_ll(const CombineArgs& send, const CombineArgs& recv, int blocks, cudaStream_t s);
void launch_combine_ll_send(const CombineArgs& a, int blocks, cudaStream_t s);
void launch_combine_ll_recv(const CombineArgs& a, int blocks, cudaStream_t s);
int combine_ll_resident_blocks_per_sm();
void launch_dispatch_pipe(const DispatchArgs& send_next, const DispatchRecvArgs& recv, bool next, int blocks, int send_blocks, cudaStream_t s);
// A whole operation of several rounds as one persistent kernel (dispatch_ring.cu): blocks
// [0, send_blocks) send, the others copy; every block must stay resident (own GPUs only).
void launch_dispatch_ring(const DispatchArgs& send, const DispatchRecvArgs& recv, int blocks, int send_blocks, cudaStream_t s);
/// Blocks of the streamed dispatch an SM holds at once, with the dynamic shared memory that
/// `tune`'s copy way takes (dispatch_ring_smem).
int dispatch_ring_resident_blocks_per_sm(unsigned tune);
size_t dispatch_ring_smem(unsigned tune);
// The combine of an operation whose dispatch was streamed, as one persistent kernel (combine_ring.cu):
// blocks [0, send_blocks) send partial rows, the others sum this rank's tokens; every block must
// stay resident (own GPUs only).
void launch_combine_ring(const CombineArgs& a, int blocks, int send_blocks, cudaStream_t s);
int combine_ring_resident_blocks_per_sm();
void launch_combine_pipe(const CombineArgs& send_next, const CombineArgs& recv, bool next, int blocks, int send_blocks, cudaStream_t s);
int dispatch_resident_blocks_per_sm();
int combine_resident_blocks_per_sm();  // (every combine kernel but the pipelined one)
int combine_pipe_resident_blocks_per_sm();

}  // namespace symmem::moe::kern
