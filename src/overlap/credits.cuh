#pragma once
// Internal: the credits that let matmul_reduce_scatter's fused forms start without a barrier.
//
// Every form of matmul_reduce_scatter uses the TensorParallel's `recv` buffer: the overlapped forms
// land the peers' rows there (data slots, and signal slots [0, N) or [0, (N-1) x chunks)), the
// sequential one holds its GEMM's output there for the reduce-scatter. Each call ends with
// end_recv_call on this rank, once no rank reads or writes this rank's recv for it any more (the
// fused forms: the GEMM's last CTA, after every push into recv has landed and been read; the
// others: a one-thread kernel after their last use of recv, and for the sequential form after a
// reduce-scatter whose end implies its peers' reads of this rank's input are done, as every
// reduce-scatter of the Communicator's does: direct's closing barrier, the others read only their
// own input): it zeroes the signal slots, then adds
// 1 to this rank's epoch word (pad slot kCreditSlot + kMaxTeam, local) and writes the new value
// into credit slot kCreditSlot + me of every peer's pad (a release store at system scope). So
// credit slot q of rank r holds the number of recv calls rank q has ended, and rank r's epoch the
// number it has ended itself. Every rank makes the same calls in the same order (the form is
// chosen from arguments all ranks share), so the same calls end recv calls on every rank.
//
// The fused forms (Form::kFused, kFusedT) start without a barrier. Their only writes to a peer are
// the copy engine's pushes of block p into rank p's recv slot `me` and its signal slot `me`, and
// each push waits (on its stream) for the GEMM's count of that block's row group. The GEMM counts
// no tile before every peer's credit slot has reached this rank's epoch (open_gate / pass_gate,
// bounded; the epoch read at the launch): each rank p has then ended as many recv calls as this
// rank has before this one, i.e. every earlier one, so no rank reads or writes p's recv for those
// calls any more
// (whatever their shapes, i.e. wherever their slots lay), and p's signal slot `me` was zeroed
// before the credit was written. Why for any N and any interleaving:
// - No lost signal, no overwritten data: shown above; a rank's pushes of call c into p come after
//   p ended every recv call before c.
// - No wait forever: the credit that a count waits for is rank p's end of its previous recv call,
//   which depends only on that call's pushes to p, all of which this rank made before its own end
//   of that call (its pushes were joined into its stream), which precedes this GEMM in stream
//   order. So the credit always comes, whatever p does afterwards. (Every wait is bounded anyway:
//   an expiry is recorded, the tile is counted all the same, and the host raises the error.)
// - The sequential form ends its calls too (one kernel more a call: without it, session 60's first
//   run of Overlap.ReduceScatterFormsOneAfterAnother had a fused call's pushes overwrite a slower
//   peer's recv while its reduce-scatter still read it: the calls' slots lie at other offsets).
// - The barrier forms (sum, ring, the epilogue ring) still start with a barrier, which orders them
//   after every peer's previous call, fused or not; they end recv calls like the others so that a
//   fused call after them waits for their end.
// tests/host/test_overlap_credits_model.cpp runs this argument: random sequences of the forms at
// 2-8 ranks, random interleavings, no early push and no stuck run; without the sequential form's
// end, or without the gate, it finds early pushes.
// The epoch and credits are 64-bit counters that start at zero with the buffer's pad (a fresh
// TensorParallel) and only grow: no wrap, no reset, nothing for a CUDA graph's replays to undo.
#include <cstdint>

#include "symmem/device/handle.hpp"

namespace symmem::overlap {

/// recv's pad: credit slots [kCreditSlot, kCreditSlot + kMaxTeam), this rank's epoch at
/// kCreditSlot + kMaxTeam (user slots: the forms' own signals stay below kCreditSlot).
constexpr int kCreditSlot = 512;
static_assert(kCreditSlot + pad::kMaxTeam + 1 <= pad::kUserSlots, "the credits overflow the user slots");

}  // namespace symmem::overlap

#if defined(__CUDACC__)
#include "symmem/device/atomics.cuh"
#include "symmem/device/p2p.cuh"

namespace symmem::overlap {

/// One thread, at the end of a recv call (after its last use of recv): zeroes this rank's signal
/// slots [0, clear), then counts the call in the epoch and hands every peer the new value.
__device__ __forceinline__ void end_recv_call(const DeviceHandle& h, int clear) {
  for (int i = 0; i < clear; ++i) device::st_relaxed(h.local_signals + i, 0);
  __threadfence_system();
  uint64_t* epoch = h.local_signals + kCreditSlot + pad::kMaxTeam;
  const uint64_t e = device::ld_relaxed(epoch) + 1;
  device::st_relaxed(epoch, e);
  for (int q = 0; q < h.nranks; ++q)
    if (q != h.rank) device::signal(h, q, kCreditSlot + h.rank, e);
}

/// A GEMM's launch with HopperRowShards::credits keeps a gate word in each CTA's shared memory
/// (zero at the launch): one thread that counts nothing (a producer warp's) opens it once every
/// peer has ended as many recv calls as this rank has (its epoch, which only the launch's end
/// moves; each wait bounded), and a counting thread passes it before each count. Every count then
/// follows every credit (release and acquire at CTA scope after the credits' system-scope
/// acquires). (A gate a counting thread kept itself spilled registers of the 128 x 256 GEMM's
/// consumers; waiting for every peer, not only the push's rank, is the same wait in practice:
/// the credits come at the peers' previous ends.)
__device__ __forceinline__ void open_gate(const DeviceHandle& h, uint32_t* gate) {
  const uint64_t epoch = device::ld_relaxed(h.local_signals + kCreditSlot + pad::kMaxTeam);
  for (int q = 0; q < h.nranks; ++q)
    if (q != h.rank) device::wait_signal(h, kCreditSlot + q, Cmp::kGe, epoch, q);
  asm volatile("st.release.cta.shared::cta.u32 [%0], 1;" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(gate))) : "memory");
}
__device__ __forceinline__ void pass_gate(const uint32_t* gate) {
  uint32_t open = 0;
  do {
    asm volatile("ld.acquire.cta.shared::cta.u32 %0, [%1];" : "=r"(open) : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(gate))) : "memory");
  } while (open == 0);
}

}  // namespace symmem::overlap
#endif
