#pragma once
// Internal: the layout of the MoE buffer and the kernels' arguments (moe.cpp, dispatch.cu, combine.cu).
//
// One symmetric buffer per ExpertParallel, the same layout on every rank:
//   stage  [2][n][max_tokens] rows      written by the senders of dispatch (parity p, source s)
//   meta   [2][n][max_tokens] Meta      each staged row's source token, local experts, weights,
//                                       and (written by the receiver) the slot each expert gave it
//   comb   [2][n][max_tokens][H] bf16   written by the ranks that combined (parity p, source rank s)
//   local scratch (peers never touch it): send counts, each token's destination ranks, expert
//                                       counters, received counts, block arrival counters.
// Signal pad (user slots): the op epoch (local), dispatch flags (parity, source) carrying
// (epoch << 32 | rows sent), combine flags (parity, source) carrying the epoch.
//
// Flow control, for any N and any interleaving of the ranks' progress: operation k (dispatch k,
// then combine k) uses parity k & 1. Every rank sends every peer a flag in every dispatch and
// every combine, and waits for every peer's flag (rule (R) of the sequenced workspace), so a rank
// writing parity p for operation k + 2 has received the peer's flag of a step of operation k + 1,
// which the peer sends only after it has finished reading parity p for operation k (its dispatch
// k + 1 follows its combine k in stream order). Flags only grow (the epoch is in the high bits), so
// a flag of operation k is never taken for one of operation k + 2.
#include <cstddef>
#include <cstdint>

#include "symmem/device/handle.hpp"
#include "symmem/moe.hpp"

namespace symmem::moe::kern {

constexpr int kMaxTopk = 16;
constexpr int kThreads = 512;
constexpr int kScaleGroup = 128;  // fp8: one scale per 128 channels

struct Meta {
  int32_t src_token;
  int32_t pad_[3];
  int32_t expert[kMaxTopk];  // local expert id, or -1
  float weight[kMaxTopk];
  int32_t slot[kMaxTopk];    // row in recv_x of that expert (receiver-written), -1: dropped
};
static_assert(sizeof(Meta) % 16 == 0, "Meta rows stay 16-byte aligned");

// Signal pad slots.
constexpr int kEpochSlot = 0;     // the last dispatch's epoch (local)
constexpr int kCombinedSlot = 1;  // the epoch of the last combine (local): one combine per dispatch
inline constexpr int dispatch_flag(int parity, int src) { return 8 + parity * pad::kMaxTeam + src; }
inline constexpr int combine_flag(int parity, int src) { return 8 + 2 * pad::kMaxTeam + parity * pad::kMaxTeam + src; }
static_assert(8 + 4 * pad::kMaxTeam <= pad::kUserSlots, "MoE flags fit the user slots");

struct Layout {
  int n = 1, hidden = 0, topk = 0, experts_local = 0, max_tokens = 0, capacity = 0;
  bool fp8 = false;
  int scale_words = 0;  // 32-bit scale words per row (moe::detail::scale_words)
  size_t row = 0;  // staged row bytes
  size_t stage_off = 0, meta_off = 0, comb_off = 0, send_count_off = 0, token_ranks_off = 0, expert_count_off = 0,
         recv_count_off = 0, arrive_off = 0, bytes = 0;
  SYMMEM_HOST_DEVICE size_t elem() const { return fp8 ? 1 : 2; }
};
SYMMEM_API Layout make_layout(const Config& c, int nranks);  // (exported for the host tests)

struct DispatchArgs {
  DeviceHandle h;  // the MoE buffer
  Layout L;
  const char* x;
  const uint32_t* scales;
  const void* topk_idx;
  bool idx_int64;
  const float* weights;
  int tokens;
  int num_experts;
};
struct DispatchRecvArgs {
  DeviceHandle h;
  Layout L;
  char* recv_x;
  uint32_t* recv_scales;
  int* expert_counts;
};
struct CombineArgs {
  DeviceHandle h;
  Layout L;
  const char* expert_out;  // [E_local, capacity, H] bf16
  bool weighted;
  char* out;               // [T, H] bf16 (recv half)
  int tokens;              // this rank's tokens of the last dispatch (recv half)
};

void launch_dispatch_send(const DispatchArgs& a, int blocks, cudaStream_t s);
void launch_dispatch_recv(const DispatchRecvArgs& a, int blocks, cudaStream_t s);
void launch_combine_send(const CombineArgs& a, int blocks, cudaStream_t s);
void launch_combine_recv(const CombineArgs& a, int blocks, cudaStream_t s);

}  // namespace symmem::moe::kern
