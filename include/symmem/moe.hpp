#pragma once
// Expert-parallel dispatch and combine over symmetric memory (mixture-of-experts layers).
//
// Dispatch moves each token once to every rank that holds any of its top-k experts (not once per
// expert): the row lands in that rank's staging area by direct NVLink stores, and the receiving
// rank copies it locally into every one of its experts the token chose, expert-major
// [E_local, capacity, H] (with one round the sender claims the token's row in each expert, by an
// atomic on that expert's rank beside its stores, so the receiver only copies; 4 x H200 decode
// dispatch 0.7 us faster; SYMMEM_MOE_SENDER_CLAIMS=0 in every rank's environment leaves the claims
// to the receiver). Combine sends, for each token a rank received, one partial row back to
// the token's source: the sum over that rank's experts of w_k * y_k, accumulated in fp32 and sent
// as bf16; the source sums the partials of all ranks in fp32.
//
// Every wait is bounded (rank, peer and what was awaited in the error); an expert that receives
// more tokens than its capacity keeps the first `capacity` and the call raises InvalidArgument
// (at the next Context::check / synchronize) naming rank, expert and count: nothing is written past
// a buffer. An expert index outside [0, num_experts) other than -1 is skipped and raised the same
// way: by its rank (token and index) and, from their combine or next dispatch, by every other
// rank. Host synchronisation: none; every call is capturable in a CUDA graph.
//
// Memory (symmetric, per rank; `bytes_per_rank()` says the total): two staging areas of
// nranks x R rows (R = round_tokens, default max_tokens; row = H elements + scales, 16-byte
// aligned, 128 from 2 KiB), two sets of routing records for nranks x max_tokens rows (208 bytes
// each), two combine areas of nranks x R x H bf16, and small counters. For the decode shape (128 tokens, H 7168, fp8,
// top-8, 4 ranks) that is about 22 MiB; for prefill (4096 tokens) about 95 MiB at R 512 and 180 MiB
// at R 1024 (symmem-bench's rounds). The streamed dispatch and combine (Kernels) add four words
// of 8 bytes per ring slot (2 x R slots a source, at most 1024 above two ranks) and 5 bytes per
// (token, rank): at most 0.35 MiB for that prefill.
//
// Calls are collective over the communicator: every rank calls dispatch and combine in the same
// order (a rank may pass 0 tokens). Tokens per call may differ across ranks (up to max_tokens).
// With one round, the send and receive halves may be called separately (to overlap them with
// compute), in the order send, recv; one combine follows each dispatch (a second one is refused
// and reported on every rank).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "symmem/collectives.hpp"
#include "symmem/export.hpp"

namespace symmem::moe {

/// How dispatch() and combine() launch each round: the send half and the receive half as two
/// kernels, or as one (send, then receive in the same grid: one launch and one grid-wide drain less
/// per step; the grid must stay resident while it waits for the peers, so it is sized to what fits,
/// and it is refused where ranks share a GPU).
/// kAuto, where every rank has its own GPU: a dispatch of several rounds streams through per-source
/// rings in one persistent kernel (dispatch_streamed(); SYMMEM_MOE_RING=0 in every rank's
/// environment keeps the rounds), and so does its combine (combine_streamed();
/// SYMMEM_MOE_COMBINE_RING=0 keeps the combine's rounds): prefill dispatch 15-16% faster than the
/// rounds at 4 x H100 and 4 x H200 (18-21% under skewed routing), 22-31% at 2 GPUs; prefill combine
/// 17% faster at 4 x H200 (13% skewed, 13% at 2 GPUs). Their grids stay resident while they wait,
/// so a kernel of the caller's on another stream that holds SMs delays them (waits are bounded). An
/// operation of one round (decode) runs one kernel (at 4 x H100 ~10% faster than two for a decode
/// combine, as fast for dispatch). Otherwise, and wherever ranks share a GPU, two kernels a round;
/// except that under SYMMEM_MOE_RING=0 a dispatch of several rounds at one or two ranks on GPUs
/// whose memory peaks below 4 TB/s (H100, not H200) runs one kernel a round, its own rows straight
/// into the experts (7% faster at 2 x H100, 7% slower at 2 x H200). A dispatch through lines
/// (dispatch_lines) runs two kernels whatever Kernels says, the receive kernel beside the send
/// kernel. The halves called apart (dispatch_send, ...) always run their own kernels.
enum class Kernels : int { kAuto = 0, kTwo = 1, kOne = 2 };

struct Config {
  int hidden = 0;          // H: any value whose row is a multiple of 16 bytes
  int topk = 0;            // K: 1..16
  int num_experts = 0;     // E: a multiple of the number of ranks
  int max_tokens = 0;      // tokens per rank per call, at most
  int capacity = 0;        // rows per local expert; 0: nranks * max_tokens (cannot overflow)
  bool fp8 = false;        // dispatch payload: bf16, or fp8 e4m3 with a scale per 128 channels
  bool ue8m0 = false;      // fp8 scales as UE8M0 exponents, 4 packed in an int32 (else fp32 each)
  int round_tokens = 0;    // tokens moved per round (0: max_tokens, one round). Fewer bound the
                           // staging and combine areas (prefill); dispatch and combine then loop
                           // over ceil(max_tokens / round_tokens) rounds
  Kernels kernels = Kernels::kAuto;  // one or two kernels a round (see Kernels)
};

/// What dispatch reads (device pointers). x: [T, H] bf16, or fp8 e4m3 with scales [T, G] fp32
/// (G = ceil(H/128)) or, with ue8m0, [T, ceil(G/4)] int32 of packed UE8M0 bytes; topk_idx: [T, K]
/// int32 or int64 (-1: no expert); topk_weights: [T, K] fp32 or null (weight 1). A token that names
/// one expert in two entries gives that expert the row twice, and combine weighs each entry, as it
/// would two experts (the random MoE test checks it).
struct DispatchIn {
  const void* x = nullptr;
  const void* scales = nullptr;
  const void* topk_idx = nullptr;
  bool idx_int64 = false;
  const float* topk_weights = nullptr;
  int tokens = 0;
};
/// What dispatch writes (device pointers): recv_x [E_local, capacity, H] (bf16 or fp8),
/// recv_scales [E_local, capacity, scale words] in the input's scale format (fp8 only),
/// expert_counts [E_local] int32 (rows written per local expert).
struct DispatchOut {
  void* recv_x = nullptr;
  void* recv_scales = nullptr;
  int* expert_counts = nullptr;
};

class SYMMEM_API ExpertParallel {
 public:
  /// Collective over comm's team. Checks the config on every rank (and that it is the same on every
  /// rank) and allocates the symmetric buffers from comm's heap.
  ExpertParallel(Communicator& comm, const Config& cfg);
  ~ExpertParallel();
  ExpertParallel(const ExpertParallel&) = delete;
  ExpertParallel& operator=(const ExpertParallel&) = delete;

  int local_experts() const { return cfg_.num_experts / nranks_; }
  int capacity() const { return cfg_.capacity; }
  size_t bytes_per_rank() const;
  const Config& config() const { return cfg_; }
  /// Whether combine() runs one kernel a round (Config::kernels, kAuto resolved), and dispatch()
  /// (never through lines: there its receive kernel runs beside its send kernel).
  bool one_kernel_per_round() const;
  bool dispatch_one_kernel_per_round() const;
  /// Whether dispatch() runs an operation of several rounds as one streamed kernel (kAuto, each rank
  /// on its own GPU, several rounds, and not SYMMEM_MOE_RING=0 when this object was made).
  bool dispatch_streamed() const;
  /// Whether combine() streams too (after a streamed dispatch, unless SYMMEM_MOE_COMBINE_RING=0).
  bool combine_streamed() const;
  /// Whether dispatch() and combine() move their rows as LL lines, the flag in the data (one round,
  /// i.e. round_tokens 0, of at most 8 tokens a rank, or of up to 32 at up to 4 ranks where
  /// max_tokens x hidden is at most 262144; at most 1024 experts a rank; and not SYMMEM_MOE_LL=0
  /// when this object was made): no fence, flag word or remote atomic on their path, for decode
  /// steps of a few tokens (4 x H200, one token a rank: dispatch 6.0-6.6 us against 10.4-11.3
  /// staged, combine 5.2-5.9 against 7.8-9.3; NCCL's all-to-all of the rows padded to one a rank
  /// takes 7.2-7.8). The dispatch runs two kernels, its receive kernel beside its send kernel.
  /// Their slots take 2 x nranks x max_tokens x (16 + 16 x (K + ceil(row bytes / 8)) + 2048 x
  /// ceil(2 H / S)) bytes a rank (S: 1024, or 1536 where the combine takes wide lines), and 32 x
  /// nranks more.
  bool dispatch_lines() const;
  /// A debugging aid: with SYMMEM_MOE_TRACE=1 in the environment when this object was made, the
  /// kernels stamp their phases (%globaltimer, ns) and this returns the stamps of the last
  /// dispatch and combine round, in the order of kern::TracePoint (src/moe/moe_kernels.hpp: send
  /// start, stores fenced, flags raised, receive start, peers' flags in, receive elected, receive
  /// done for dispatch; the same for combine, without the last; then each half's block 0 done with
  /// its own work). Empty when tracing is off. Call after the stream has finished the operation.
  std::vector<uint64_t> trace_ns() const;

  /// The halves (one round only: round_tokens 0 or >= max_tokens).
  void dispatch_send(const DispatchIn& in, cudaStream_t stream);
  void dispatch_recv(const DispatchOut& out, cudaStream_t stream);
  /// Every round: send, then receive.
  void dispatch(const DispatchIn& in, const DispatchOut& out, cudaStream_t stream);
  /// expert_out: [E_local, capacity, H] bf16, row r of expert e the output for recv_x[e][r] of the
  /// last dispatch. weighted: by the tokens' topk_weights (else a plain sum).
  void combine_send(const void* expert_out, bool weighted, cudaStream_t stream);
  /// out: [T, H] bf16 for this rank's T tokens of the last dispatch (0 for a token with no expert).
  void combine_recv(void* out, cudaStream_t stream);
  void combine(const void* expert_out, void* out, bool weighted, cudaStream_t stream);

 private:
  void check_in(const DispatchIn& in) const;
  void check_out(const DispatchOut& out) const;
  void dispatch_round(const DispatchIn* in, const DispatchOut* out, int j, cudaStream_t stream);
  void combine_round(const void* expert_out, bool weighted, void* out, bool recv, int j, cudaStream_t stream);
  void dispatch_pipelined(const DispatchIn& in, const DispatchOut& out, cudaStream_t stream);
  void dispatch_ring(const DispatchIn& in, const DispatchOut& out, cudaStream_t stream);
  void combine_pipelined(const void* expert_out, bool weighted, void* out, cudaStream_t stream);
  void combine_ring(const void* expert_out, bool weighted, void* out, cudaStream_t stream);
  struct Impl;
  Communicator& comm_;
  Config cfg_;
  int nranks_ = 1, rank_ = 0;
  std::unique_ptr<Impl> impl_;
};

namespace detail {
/// 32-bit scale words per row: 0 for bf16, ceil(H/128) fp32 scales, or ceil(ceil(H/128)/4)
/// packed UE8M0 words.
SYMMEM_API int scale_words(int hidden, bool fp8, bool ue8m0);
/// Bytes of one staged row: H elements (1 or 2 bytes) and the scale words, rounded up to 16, and
/// from 2 KiB up to 128 (rows start on a line).
SYMMEM_API size_t row_bytes(int hidden, bool fp8, bool ue8m0 = false);
/// "" when the config is usable with `nranks` ranks, else what is wrong.
SYMMEM_API std::string check_config(const Config& c, int nranks);
}  // namespace detail

}  // namespace symmem::moe
