#pragma once
// Plain, trivially copyable structs that kernels receive by value. g++ parses this header.
#include <cstddef>
#include <cstdint>

#include "symmem/export.hpp"

namespace symmem {

/// Comparisons for signal waits.
enum class Cmp : int { kEq = 0, kNe, kGe, kGt, kLe, kLt };
/// How a signal is written.
enum class SignalOp : int { kSet = 0, kAdd };
/// What a device-side error report is about: a wait that timed out (signal, barrier, collective
/// flag, a word of the MoE streamed dispatch or combine), an abort, or a bad argument found on the
/// GPU (all_to_all_v counts; MoE routing: an expert id out of range, an expert over its capacity).
enum class WaitKind : int { kNone = 0, kSignal, kBarrier, kCollective, kAborted, kBadCount, kMoe, kMoeRing, kMoeLines, kMoeCombineLines, kWord };

/// Where device code reports errors (pinned host memory, one per context). flag: 0 none, 1 being
/// written, 2 complete. `timeout_ns` and `abort_waits` are written by the host: the first is the
/// bound of every device wait (a run-time setting, read when a wait has spun a while), the second
/// makes every wait of this context give up at once (set on a timeout and by abort()). Device code
/// writes this record with plain stores only: a GPU's read-modify-write atomics on host memory are
/// atomic only where it reports native host atomics (cudaDevAttrHostNativeAtomicSupported; not
/// over PCIe, where compute-sanitizer's memcheck stops the kernel), so the first error of a
/// `generation` is chosen by an atomic on `claim`, a word in the context's device memory
/// (record_error).
struct DeviceErrorRecord {
  unsigned int flag;
  int kind;           // WaitKind
  int rank;           // team rank that waited
  int global_rank;
  int peer;           // team rank it waited on (-1: any)
  int cmp;            // Cmp
  unsigned long long slot;
  unsigned long long expected;
  unsigned long long seen;
  unsigned long long waited_ns;
  unsigned int block;
  unsigned int thread;
  unsigned long long timeout_ns;  // bound of every device wait (host-written)
  unsigned int abort_waits;       // nonzero: every wait gives up at once
  unsigned int generation;        // host-written: + 1 at every reset of the record
  unsigned int* claim;            // device memory: the last generation an error claimed, + 1
};
/// Wait bound where a handle has no error record.
SYMMEM_HOST_DEVICE constexpr unsigned long long default_timeout_ns() { return 20ull * 1000 * 1000 * 1000; }

/// Layout of the signal pad (uint64 slots) that every symmetric buffer carries.
namespace pad {
constexpr size_t kBytes = 256 * 1024;
constexpr size_t kSlots = kBytes / 8;
constexpr int kUserSlots = 1024;               // [0, 1024): free for the user
constexpr int kMaxTeam = 64;                   // ranks a symmetric team may hold
constexpr int kBarrierChannels = 256;          // independent block-level barriers (one per block)
constexpr size_t kBarrierBase = 1024;          // arrival slot per (channel, peer)
constexpr size_t kCounterBase = kBarrierBase + static_cast<size_t>(kBarrierChannels) * kMaxTeam;  // local epochs
constexpr size_t kOpBase = kCounterBase + kBarrierChannels;  // reserved for symmem's operations
constexpr size_t kOpSlots = 8192 + 64;
SYMMEM_HOST_DEVICE constexpr size_t barrier_slot(int channel, int peer) {
  return kBarrierBase + static_cast<size_t>(channel) * kMaxTeam + static_cast<size_t>(peer);
}
SYMMEM_HOST_DEVICE constexpr size_t counter_slot(int channel) { return kCounterBase + static_cast<size_t>(channel); }
static_assert(kOpBase + kOpSlots <= kSlots, "signal pad regions overflow the pad");
}  // namespace pad

/// A symmetric buffer as kernels see it: this rank's pointer, every peer's pointer as mapped in
/// this process, and every peer's signal pad. Every peers[p] is congruent to `local` mod 4096 (the
/// heap places a block at the same offset of every member's arena, each mapped at an address its
/// granularity divides, and checks it): device::put chooses its access width from the local address.
struct DeviceHandle {
  void* local;
  void* const* peers;          // device array [nranks]
  uint64_t* const* signals;    // device array [nranks]
  uint64_t* local_signals;
  size_t bytes;
  int rank;                    // team rank
  int nranks;
  int global_rank;
  DeviceErrorRecord* error;    // device pointer of the context's record (wait bound, abort, errors)
};

}  // namespace symmem
