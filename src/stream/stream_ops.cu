#include "../runtime/call_scope.hpp"
#include "../runtime/device_code.hpp"
#include "../runtime/driver.hpp"
#include "symmem/device.cuh"
#include "symmem/device/bulk.cuh"
#include "symmem/error.hpp"
#include "symmem/stream.hpp"

namespace symmem {

namespace detail {
int copy_grid_blocks(size_t bytes, int threads, int max_blocks, size_t min_bytes_per_thread) {
  size_t per_block = static_cast<size_t>(threads) * min_bytes_per_thread;
  size_t blocks = (bytes + per_block - 1) / per_block;
  if (blocks < 1) blocks = 1;
  if (blocks > static_cast<size_t>(max_blocks)) blocks = static_cast<size_t>(max_blocks);
  return static_cast<int>(blocks);
}
SmPutPlan plan_sm_put(size_t bytes, uintptr_t dst, uintptr_t src, int sms, bool bulk) {
  SmPutPlan p;
  if (bulk && bytes >= kBulkMinBytes && ((dst | src) & 15u) == 0) {
    p.bulk_chunk = kBulkChunk;
    p.threads = 32;
    size_t chunks = (bytes + kBulkChunk - 1) / kBulkChunk;
    p.blocks = static_cast<int>(chunks < static_cast<size_t>(sms) ? chunks : static_cast<size_t>(sms));
  } else {
    p.threads = 512;
    p.blocks = copy_grid_blocks(bytes, p.threads, sms);
  }
  return p;
}
void check_range(const char* op, const char* arg, size_t offset, size_t bytes, size_t size) {
  if (offset > size || bytes > size - offset)
    fail(std::string(op) + ": " + arg + " + bytes = " + std::to_string(offset) + " + " + std::to_string(bytes) +
         " runs past the symmetric buffer's " + std::to_string(size) + " bytes");
}
void check_slot(const char* op, int slot) {
  if (slot < 0 || slot >= pad::kUserSlots)
    fail(std::string(op) + ": slot=" + std::to_string(slot) + " is out of range [0, " + std::to_string(pad::kUserSlots) +
         "); higher slots are symmem's own");
}
void check_peer(const char* op, int peer, int nranks) {
  if (peer < 0 || peer >= nranks)
    fail(std::string(op) + ": peer=" + std::to_string(peer) + " is out of range [0, " + std::to_string(nranks) + ")");
}
}  // namespace detail

namespace {
constexpr int kCopyThreads = 512;

// SM put: a plain copy over the grid, or (bulk_chunk > 0) the bulk-copy unit fed by one thread per
// block, the sub-16-byte tail copied by block 0. With slot >= 0 the last block to finish signals.
__global__ void put_kernel(DeviceHandle h, int peer, size_t dst_offset, const void* src, size_t bytes, int slot,
                           uint64_t value, int op, size_t bulk_chunk) {
  char* dst = device::peer_ptr(h, peer, static_cast<char*>(h.local) + dst_offset);
#if defined(SYMMEM_HAS_BULK_COPY)
  if (bulk_chunk > 0) {
    extern __shared__ __align__(128) char stages[];
    __shared__ uint64_t bars[device::kBulkStages];
    const size_t body = bytes & ~size_t(15);
    if (threadIdx.x == 0)
      device::bulk_copy_chunks(dst, static_cast<const char*>(src), body, bulk_chunk, blockIdx.x, gridDim.x, stages, bars);
    if (blockIdx.x == 0) device::copy_bytes(dst + body, static_cast<const char*>(src) + body, bytes - body, threadIdx.x, blockDim.x);
  } else
#endif
  {
    device::copy_bytes(dst, src, bytes, device::grid_index(), device::grid_size());
  }
  if (slot < 0) return;
  // A fence orders only the calling thread's writes: every thread that stored fences before the
  // block counts itself done, so the signal can never overtake another thread's data.
  device::fence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    // One completion counter per (buffer, peer): one put_signal per buffer and peer in flight at a time.
    unsigned long long* done = reinterpret_cast<unsigned long long*>(h.local_signals + pad::kOpBase + peer);
    if (atomicAdd(done, 1ull) == gridDim.x - 1) {
      *done = 0;
      device::signal(h, peer, slot, value, static_cast<SignalOp>(op));
    }
  }
}

__global__ void get_kernel(DeviceHandle h, int peer, void* dst, size_t src_offset, size_t bytes) {
  const char* src = static_cast<const char*>(h.local) + src_offset;
  device::copy_bytes(dst, device::peer_ptr(h, peer, src), bytes, device::grid_index(), device::grid_size());
}

__global__ void signal_kernel(DeviceHandle h, int peer, int slot, uint64_t value, int op) {
  device::fence_system();  // work earlier in the stream (copies included) is visible before the signal
  device::signal(h, peer, slot, value, static_cast<SignalOp>(op));
}

__global__ void wait_kernel(DeviceHandle h, int slot, int cmp, uint64_t value) {
  device::wait_signal(h, slot, static_cast<Cmp>(cmp), value);
}

__global__ void barrier_kernel(DeviceHandle h) { device::barrier_block(h, 0); }

int sm_count() {
  static int n = [] {
    int dev = 0, c = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, dev);
    return c > 0 ? c : 132;
  }();
  return n;
}

void launch_put(const SymmetricBuffer& dst, int peer, size_t off, const void* src, size_t bytes, int slot,
                uint64_t value, SignalOp op, cudaStream_t s, Engine engine) {
  const char* name = slot < 0 ? "stream::put" : "stream::put_signal";
  detail::check_peer(name, peer, dst.nranks());
  detail::check_range(name, "dst_offset", off, bytes, dst.bytes());
  require(src != nullptr || bytes == 0, name, ": src is null");
  if (engine == Engine::kCopyEngine) {
    if (bytes) SYMMEM_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst.peer_ptr(peer)) + off, src, bytes, cudaMemcpyDeviceToDevice, s));
    if (slot >= 0) {
      // The signal of a copy-engine put is written by the stream itself where the driver can
      // (a set: cuStreamWriteValue64, whose default memory barrier orders the copy's writes before
      // it), so it needs no SM: a signal kernel queued behind GEMM kernels that hold every SM
      // (the overlapped GEMMs) waited for one of their blocks to end, and so did the next copy.
      detail::StreamWriteValue64 write = op == SignalOp::kSet ? detail::stream_write_value64() : nullptr;
      if (write != nullptr) {
        SYMMEM_CU_CHECK(write(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(dst.peer_signal_pad(peer) + slot), value, 0));
      } else {
        signal_kernel<<<1, 1, 0, s>>>(dst.handle(), peer, slot, value, static_cast<int>(op));
        SYMMEM_CUDA_CHECK(cudaGetLastError());
      }
    }
    return;
  }
  if (bytes == 0 && slot < 0) return;
  const char* dst_addr = static_cast<const char*>(dst.ptr()) + off;
  const detail::SmPutPlan plan = detail::plan_sm_put(bytes, reinterpret_cast<uintptr_t>(dst_addr), reinterpret_cast<uintptr_t>(src), sm_count(), detail::device_code_has_sm90());
  if (plan.bulk_chunk > 0) {
    static bool attr = [] {
      return cudaFuncSetAttribute(put_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(device::kBulkStages * detail::kBulkChunk)) == cudaSuccess;
    }();
    (void)attr;
  }
  put_kernel<<<plan.blocks, plan.threads, plan.bulk_chunk * device::kBulkStages, s>>>(
      dst.handle(), peer, off, src, bytes, slot, value, static_cast<int>(op), plan.bulk_chunk);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}
}  // namespace

namespace stream {

void put(const SymmetricBuffer& dst, int peer, size_t dst_offset, const void* src, size_t bytes, cudaStream_t s, Engine e) {
  const detail::CallScope call("symmem stream::put", dst.device());
  launch_put(dst, peer, dst_offset, src, bytes, -1, 0, SignalOp::kSet, s, e);
}

void put_signal(const SymmetricBuffer& dst, int peer, size_t dst_offset, const void* src, size_t bytes, int slot,
                uint64_t value, SignalOp op, cudaStream_t s, Engine e) {
  const detail::CallScope call("symmem stream::put_signal", dst.device());
  detail::check_slot("stream::put_signal", slot);
  launch_put(dst, peer, dst_offset, src, bytes, slot, value, op, s, e);
}

void get(void* dst, const SymmetricBuffer& src, int peer, size_t src_offset, size_t bytes, cudaStream_t s, Engine e) {
  const detail::CallScope call("symmem stream::get", src.device());
  detail::check_peer("stream::get", peer, src.nranks());
  detail::check_range("stream::get", "src_offset", src_offset, bytes, src.bytes());
  require(dst != nullptr || bytes == 0, "stream::get: dst is null");
  if (bytes == 0) return;
  if (e == Engine::kCopyEngine) {
    SYMMEM_CUDA_CHECK(cudaMemcpyAsync(dst, static_cast<const char*>(src.peer_ptr(peer)) + src_offset, bytes, cudaMemcpyDeviceToDevice, s));
    return;
  }
  int blocks = detail::copy_grid_blocks(bytes, kCopyThreads, sm_count());
  get_kernel<<<blocks, kCopyThreads, 0, s>>>(src.handle(), peer, dst, src_offset, bytes);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

void signal(const SymmetricBuffer& buf, int peer, int slot, uint64_t value, SignalOp op, cudaStream_t s) {
  const detail::CallScope call("symmem stream::signal", buf.device());
  detail::check_peer("stream::signal", peer, buf.nranks());
  detail::check_slot("stream::signal", slot);
  signal_kernel<<<1, 1, 0, s>>>(buf.handle(), peer, slot, value, static_cast<int>(op));
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

void wait(const SymmetricBuffer& buf, int slot, Cmp cmp, uint64_t value, cudaStream_t s) {
  const detail::CallScope call("symmem stream::wait", buf.device());
  detail::check_slot("stream::wait", slot);
  require(static_cast<int>(cmp) >= 0 && static_cast<int>(cmp) <= 5, "stream::wait: cmp is not a symmem::Cmp");
  wait_kernel<<<1, 1, 0, s>>>(buf.handle(), slot, static_cast<int>(cmp), value);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

void barrier(const SymmetricBuffer& buf, cudaStream_t s) {
  const detail::CallScope call("symmem stream::barrier", buf.device());
  barrier_kernel<<<1, 32 * ((buf.nranks() + 31) / 32), 0, s>>>(buf.handle());
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stream
}  // namespace symmem
