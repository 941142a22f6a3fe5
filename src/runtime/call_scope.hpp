#pragma once
// What symmem's host entry points open first: their Nsight range, and their GPU made current for
// the call. A thread whose current device is another GPU (every new thread starts on device 0) may
// call symmem, as it may call NCCL: the call makes its Context's GPU current and gives the thread
// its own back when it returns or throws. Without it, such a call launched its kernels on the
// wrong GPU ("invalid resource handle" on a stream of the right one; on the legacy stream, a fault
// in memory that GPU has not mapped). One cudaGetDevice a call, a cudaSetDevice only where the two
// differ.
#include <cuda_runtime_api.h>

#include <new>

#include "log.hpp"
#include "symmem/error.hpp"

namespace symmem::detail {

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (switch_to(device) != cudaSuccess) SYMMEM_CUDA_CHECK(cudaSetDevice(device));  // throws, naming the error
  }
  /// For destructors: never throws (a failed switch leaves the thread's device as it was).
  DeviceGuard(int device, std::nothrow_t) {
    if (switch_to(device) != cudaSuccess) (void)cudaGetLastError();
  }
  ~DeviceGuard() {
    if (prev_ >= 0) (void)cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  cudaError_t switch_to(int device) {
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) {
      (void)cudaGetLastError();
      cur = -1;
    }
    if (device < 0 || cur == device) return cudaSuccess;
    const cudaError_t rc = cudaSetDevice(device);
    if (rc == cudaSuccess) prev_ = cur;
    return rc;
  }
  int prev_ = -1;  // the thread's device to give back (-1: it was already this one)
};

/// An entry point's Nsight range and its GPU, for the call.
class CallScope {
 public:
  CallScope(const char* name, int device) : range_(name), device_(device) {}

 private:
  NvtxRange range_;
  DeviceGuard device_;
};

}  // namespace symmem::detail
