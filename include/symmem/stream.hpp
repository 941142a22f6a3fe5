#pragma once
// The host/stream API: one-sided operations enqueued on a CUDA stream; all of them can be captured
// in a CUDA graph. Arguments are checked on the host before anything is enqueued.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "symmem/device/handle.hpp"
#include "symmem/export.hpp"
#include "symmem/heap.hpp"

namespace symmem {

/// Who moves the bytes: the GPU's copy engines (cudaMemcpyAsync) or its SMs (a copy kernel).
enum class Engine { kCopyEngine, kSM };

namespace stream {

/// Writes `bytes` from `src` (device memory) to `dst` at `dst_offset` on team member `peer`.
SYMMEM_API void put(const SymmetricBuffer& dst, int peer, size_t dst_offset, const void* src, size_t bytes,
                    cudaStream_t stream, Engine engine = Engine::kSM);
/// Reads `bytes` from `src` at `src_offset` on `peer` into `dst` (device memory).
SYMMEM_API void get(void* dst, const SymmetricBuffer& src, int peer, size_t src_offset, size_t bytes,
                    cudaStream_t stream, Engine engine = Engine::kSM);
/// put, then signal `slot` of `peer` once the data is visible there. With the copy engine, a set
/// signal is written by the stream itself where the device allows (no kernel, so no SM: it does not
/// wait behind kernels that hold every SM); an add, or a device without 64-bit stream memory
/// operations, uses a one-thread kernel.
SYMMEM_API void put_signal(const SymmetricBuffer& dst, int peer, size_t dst_offset, const void* src, size_t bytes,
                           int slot, uint64_t value, SignalOp op, cudaStream_t stream, Engine engine = Engine::kSM);
/// Sets or adds to signal `slot` of `peer` (release: the stream's earlier work is visible first).
SYMMEM_API void signal(const SymmetricBuffer& buf, int peer, int slot, uint64_t value, SignalOp op, cudaStream_t stream);
/// Holds the stream until this rank's signal `slot` satisfies `cmp value` (bounded by the
/// context's device timeout; Context::synchronize then throws Timeout).
SYMMEM_API void wait(const SymmetricBuffer& buf, int slot, Cmp cmp, uint64_t value, cudaStream_t stream);
/// Holds the stream until every team member has reached the same barrier on `buf`. (Its wait polls
/// without pause for 8 us, then with pauses of 1/64 of the time waited, at most 16 us: a barrier
/// that waits on a late rank returns up to a pause after it arrives; device::barrier_block.)
SYMMEM_API void barrier(const SymmetricBuffer& buf, cudaStream_t stream);

}  // namespace stream

namespace detail {
/// Grid for an SM copy of `bytes`: blocks of `threads`, at most `max_blocks`, enough that each
/// thread moves at least `min_bytes_per_thread`.
SYMMEM_API int copy_grid_blocks(size_t bytes, int threads, int max_blocks, size_t min_bytes_per_thread = 64);
/// How an SM put runs: the bulk-copy unit for large 16-byte-aligned messages, else a copy kernel.
constexpr size_t kBulkChunk = 32 * 1024;        // bytes per shared-memory stage
constexpr size_t kBulkMinBytes = 1 << 20;       // below this the plain copy kernel wins
struct SmPutPlan {
  int blocks = 1;
  int threads = 512;
  size_t bulk_chunk = 0;  // 0: plain copy kernel
};
SYMMEM_API SmPutPlan plan_sm_put(size_t bytes, uintptr_t dst, uintptr_t src, int sms, bool bulk_copy);
/// Throws InvalidArgument unless [offset, offset+bytes) fits a buffer of `size` bytes.
SYMMEM_API void check_range(const char* op, const char* arg, size_t offset, size_t bytes, size_t size);
SYMMEM_API void check_slot(const char* op, int slot);
SYMMEM_API void check_peer(const char* op, int peer, int nranks);
}  // namespace detail

}  // namespace symmem
