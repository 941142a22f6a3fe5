#pragma once
// Internal: arguments and launchers of the collective kernels.
#include <cuda_runtime_api.h>

#include <type_traits>

#include "symmem/collectives.hpp"
#include "symmem/device/handle.hpp"
#include "symmem/device/reduce.cuh"
#include "symmem/device/workspace.hpp"
#include "symmem/types.hpp"

namespace symmem::coll {

constexpr int kThreads = 512;
constexpr int kMaxBlocks = 256;                    // <= pad::kBarrierChannels
static_assert(kMaxBlocks <= pad::kBarrierChannels, "each block needs its own barrier channel");
static_assert(kThreads % 32 == 0, "device::grid_index_spread (the LL all-gather, broadcast and scatter) maps whole warps");

struct LLArgs {
  DeviceHandle ws;       // the sequenced workspace
  ws::Layout layout;
  const char* in;
  char* out;
  size_t bytes;          // payload per peer: AR, AG, broadcast: the message; RS, A2A: one rank's chunk
  int root;
  size_t chunk = 0;      // AR: > 0 runs it two-shot (ll.cu) over chunks of this many bytes (a multiple of 8)
  size_t payload = ws::kLLPayload;  // the line format: payload bytes a line (ws::ll_payload_for)
};

struct DirectArgs {
  DeviceHandle ws;       // barrier channels
  DeviceHandle in_h;     // the symmetric buffer that holds `in`
  DeviceHandle out_h;    // the symmetric buffer that holds `out` (two_shot)
  DeviceHandle counts_h; // the symmetric buffer that holds `counts` (all_to_all_v)
  const char* in;
  char* out;
  size_t bytes;          // AR, broadcast: the message; RS, AG, A2A: one rank's chunk; A2AV: element size
  int root;
  const int64_t* counts;
  int64_t* recv_counts;
  size_t out_capacity;   // A2AV: elements `out` holds
  size_t in_capacity;    // A2AV: elements from `in` to the end of its buffer
  bool push;             // AG, A2A, broadcast: write into the peers' outputs (out_h) instead of pulling
  bool in_place;         // AG: in == out + rank * chunk, so peer p's input is its out + p * chunk (out_h)
  bool rooted;           // one_shot: the reduce, whose root alone reduces (the others take the barriers)
};

struct PushArgs {
  DeviceHandle ws;       // the sequenced workspace: push stages per (parity, source)
  ws::Layout layout;
  const char* in;
  char* out;
  size_t bytes;          // payload per peer: AR the message, RS one rank's chunk
};

/// all_to_all_v through the workspace (ll_a2av.cu): LL for small splits, direct otherwise.
struct A2AVArgs {
  DeviceHandle ws;       // the sequenced workspace + barrier channels
  ws::Layout layout;
  DeviceHandle in_h;     // the symmetric buffer that holds `in` (direct branch)
  const char* in;
  char* out;
  DeviceHandle out_h;    // the symmetric buffer that holds `out`, where push (else unused)
  uint64_t out_place;    // where `out` lies in the heap (placement + offset), 0 when not symmetric:
                         // the direct branch writes into the peers' outputs where all ranks' agree
  const int64_t* counts; // this rank's row (device memory)
  int64_t* recv_counts;
  unsigned long long in_capacity, out_capacity;  // elements
  size_t es;
};
/// Largest split (bytes to one peer) that travels as LL lines; larger ones go direct.
constexpr size_t kLLMaxPairBytes = 256 * 1024;
void launch_ll_a2av(const A2AVArgs& a, int blocks, cudaStream_t s);

void launch_push(CollOp op, const PushArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s);
void launch_ll(CollOp op, const LLArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s);
void launch_all_reduce(Algo algo, const DirectArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s);
void launch_reduce_scatter(const DirectArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s);
void launch_movement(CollOp op, const DirectArgs& a, int blocks, cudaStream_t s);
/// The rooted LL operations (ll_rooted.cu): reduce, gather and scatter.
void launch_ll_rooted(CollOp op, const LLArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s);

/// Calls f(integral_constant<DataType>, integral_constant<ReduceOp>) for the runtime pair.
template <class F>
void dispatch_reduce(DataType d, ReduceOp r, F&& f) {
  auto with_op = [&](auto dt) {
    switch (r) {
      case ReduceOp::kSum: f(dt, std::integral_constant<ReduceOp, ReduceOp::kSum>{}); break;
      case ReduceOp::kMax: f(dt, std::integral_constant<ReduceOp, ReduceOp::kMax>{}); break;
      case ReduceOp::kMin: f(dt, std::integral_constant<ReduceOp, ReduceOp::kMin>{}); break;
      case ReduceOp::kProd: f(dt, std::integral_constant<ReduceOp, ReduceOp::kProd>{}); break;
      case ReduceOp::kAvg: f(dt, std::integral_constant<ReduceOp, ReduceOp::kAvg>{}); break;
    }
  };
  dispatch_dtype(d, with_op);  // (a value outside the enum: rejected before launch)
}

/// Calls f(integral_constant<size_t, P>) for the LL line format `payload` names (LLArgs::payload):
/// P is the payload bytes a line (ws::kLLNarrow or ws::kLLPayload).
template <class F>
void dispatch_ll_format(size_t payload, F&& f) {
  if (payload == ws::kLLNarrow) f(std::integral_constant<size_t, ws::kLLNarrow>{});
  else f(std::integral_constant<size_t, ws::kLLPayload>{});
}

}  // namespace symmem::coll
