#pragma once
// The heap's bookkeeping, kept apart from CUDA so host tests drive it.
//
// A heap maps memory in arenas (one collective cuMem allocation each, every member's arena mapped
// by every member) and hands out blocks of them. Member 0 alone decides where a block goes: the
// others read its decision from a small host-shared region (HeapShared). So the offsets are the
// same on every member by construction, whatever order each process frees in.
//
// Freeing is local (safe from a garbage collector: no collective, no wait on a peer): a member
// marks the block released in its own region once its GPU work on the block is done. Member 0
// returns a block's space to the book only when every member has marked it, so no member can
// still read or write a block that is handed out again.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "symmem/export.hpp"

namespace symmem::detail {

/// Member 0's map of the heap's address space: arenas and their free ranges (first fit,
/// coalescing). Arena indices are stable; a dropped arena keeps its index, with no space.
class SYMMEM_API SpaceBook {
 public:
  /// New arenas are `chunk` bytes, or a block's size rounded to `granularity` when larger.
  SpaceBook(size_t chunk, size_t granularity, size_t align);

  struct Place {
    int arena = -1;
    size_t offset = 0;
    size_t new_arena_bytes = 0;  // nonzero: `arena` is new and must be mapped with this size first
  };
  /// Where `bytes` (already a multiple of the alignment) go. Reserves the range.
  Place place(size_t bytes);
  /// Undoes place() of a new arena whose mapping failed.
  void forget_arena(int arena);
  /// Gives a range back.
  void release(int arena, size_t offset, size_t bytes);
  /// An arena larger than the chunk whose every byte is free: it can be unmapped (then
  /// drop() it). -1 when none.
  int droppable() const;
  void drop(int arena);

  size_t arenas() const { return arenas_.size(); }
  size_t arena_bytes(int arena) const { return arenas_.at(arena).bytes; }
  size_t free_bytes(int arena) const;

 private:
  struct ArenaSpace {
    size_t bytes = 0;
    bool dropped = false;
    std::map<size_t, size_t> free;  // offset -> length
  };
  size_t chunk_, granularity_, align_;
  std::vector<ArenaSpace> arenas_;
};

/// The host-shared region of one member (a memfd every member maps). Written by its owner only;
/// member 0's decision ring is read by all.
namespace shared {
constexpr int kRing = 64;          // decisions in flight (member 0 waits for the slowest reader)
constexpr int kMaxLive = 16384;    // blocks live at once in one heap

enum Kind : uint64_t { kOk = 1, kSizeMismatch = 2, kTooManyBlocks = 3, kGrowFailed = 4, kBadSize = 5 };

struct alignas(64) Decision {
  std::atomic<uint64_t> seq;  // the request it answers; written last (release)
  uint64_t kind;
  uint64_t slot;
  uint64_t arena;
  uint64_t offset;
  uint64_t new_arena_bytes;   // nonzero: every member maps a new arena `arena` of this size first
  int64_t drop_arena;         // >= 0: every member unmaps this arena (all of it released)
};

struct alignas(64) Region {
  std::atomic<uint64_t> request_seq;    // this member's latest allocation request
  std::atomic<uint64_t> request_bytes[kRing];  // sizes by request (written before request_seq): a
                                               // rank can read another's size after that rank moved on
  std::atomic<uint64_t> consumed_seq;   // latest decision this member has read
  std::atomic<uint64_t> ready_seq;      // latest block whose signal pad this member has zeroed
  Decision ring[kRing];                 // member 0's
  std::atomic<uint64_t> released[kMaxLive];  // released[slot] = id of the block this member released there
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "host-shared counters must be lock-free");
}  // namespace shared

}  // namespace symmem::detail
