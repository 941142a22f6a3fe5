#pragma once
// The symmetric heap: collective allocations that every rank of a (single-host) team maps.
// Its memory is cuMem VMM memory, exported as POSIX fds, passed to the team's processes over Unix
// sockets, and mapped there; each buffer carries a signal pad (symmem::pad) right after its data.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "symmem/context.hpp"
#include "symmem/device/handle.hpp"
#include "symmem/export.hpp"
#include "symmem/team.hpp"

namespace symmem {

namespace detail {
struct Allocation;
struct HeapState;
}  // namespace detail

/// A symmetric buffer: a cheap handle; the heap owns the memory until Heap::free or ~Heap.
class SYMMEM_API SymmetricBuffer {
 public:
  SymmetricBuffer() = default;
  bool valid() const { return a_ != nullptr; }
  /// This rank's memory.
  void* ptr() const;
  template <class T>
  T* as() const { return static_cast<T*>(ptr()); }
  /// Team member `peer`'s memory, as mapped in this process (any rank may load/store it).
  void* peer_ptr(int peer) const;
  /// Bytes of data (as asked for; the signal pad is not counted).
  size_t bytes() const;
  /// This rank's signal pad (pad::kSlots uint64 slots).
  uint64_t* signal_pad() const;
  uint64_t* peer_signal_pad(int peer) const;
  int rank() const;
  int nranks() const;
  /// The GPU this rank's memory lives on (its Context's device, in this process's numbering).
  int device() const;
  /// The struct kernels take by value.
  const DeviceHandle& handle() const;
  /// True when [p, p+n) lies inside this rank's buffer.
  bool contains(const void* p, size_t n = 1) const;
  /// Where the buffer lies in its heap (nonzero): the same on every rank for one symmetric buffer,
  /// different for two live buffers. Lets ranks check on the GPU that they hold the same buffer.
  uint64_t placement() const;

 private:
  friend class Heap;
  explicit SymmetricBuffer(std::shared_ptr<detail::Allocation> a) : a_(std::move(a)) {}
  std::shared_ptr<detail::Allocation> a_;
};

/// The symmetric heap of a team. It maps memory in large arenas (SYMMEM_HEAP_CHUNK_MB, default
/// 256 MiB, or one buffer's size when larger: one collective cuMem allocation and fd exchange
/// each) and hands out buffers from them. An alloc that fits what is mapped takes microseconds:
/// member 0 places it and the others read its decision from host-shared memory. Every buffer
/// carries its own signal pad (pad::kBytes), zeroed on every member before alloc returns.
class SYMMEM_API Heap {
 public:
  /// A heap over `team` (default: the world). Checks, on every rank, that the team shares one host,
  /// that every pair of its GPUs has peer access, and that the GPUs support VMM with POSIX fds.
  explicit Heap(std::shared_ptr<Context> ctx);
  Heap(std::shared_ptr<Context> ctx, Team team);
  ~Heap();
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  /// Collective: every member asks for the same `bytes`, in the same order of calls. Errors (sizes
  /// that differ, out of device memory on any rank) are raised on every rank.
  SymmetricBuffer alloc(size_t bytes);
  /// Local, no peer is waited for: waits for this device's work, then releases this rank's hold
  /// on the buffer. Its memory is handed out again once every member has released it.
  void free(SymmetricBuffer& buf);
  /// Local and non-blocking (safe in a destructor or a garbage collector): releases this rank's
  /// hold once the work queued on `stream` so far has finished. The handle is invalid at once.
  void free_async(SymmetricBuffer& buf, cudaStream_t stream);
  /// Releases every buffer on this rank without talking to the peers (after an abort: a peer may
  /// be gone). The heap is empty afterwards; peers' own mappings of this rank's memory stay valid.
  void abandon();
  /// The buffer of this heap that holds [p, p+n), or an invalid buffer.
  SymmetricBuffer find(const void* p, size_t n = 1) const;
  /// Bytes mapped per member, over every arena.
  size_t mapped_bytes() const;

  const Team& team() const { return team_; }
  Context& context() const { return *ctx_; }
  const std::shared_ptr<Context>& context_ptr() const { return ctx_; }

 private:
  std::shared_ptr<Context> ctx_;
  Team team_;
  std::unique_ptr<detail::HeapState> st_;
};

namespace detail {
/// Size mismatch check for a collective allocation: "" when all equal, else a message naming ranks.
SYMMEM_API std::string check_same_size(const std::vector<size_t>& sizes, const std::vector<int>& global_ranks);
/// Rounds up to a multiple of `align` (a power of two or not). Unchecked: see checked_round_up.
SYMMEM_HOST_DEVICE constexpr size_t round_up(size_t x, size_t align) { return align ? (x + align - 1) / align * align : x; }
/// Host size arithmetic that cannot wrap: throws InvalidArgument naming `what` instead.
SYMMEM_API size_t checked_round_up(size_t x, size_t align, const char* what);
SYMMEM_API size_t checked_mul(size_t a, size_t b, const char* what);
SYMMEM_API size_t checked_add(size_t a, size_t b, const char* what);
}  // namespace detail

}  // namespace symmem
