#include "driver.hpp"

#include <cuda_runtime_api.h>

#include <mutex>

#include "symmem/error.hpp"

namespace symmem::detail {

template <class F>
static void load(F*& fn, const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  cudaError_t rc = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q);
  if (rc != cudaSuccess || p == nullptr || q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    fail<Unsupported>(std::string("the CUDA driver lacks ") + name + " (" + cudaGetErrorString(rc) +
                      "): symmem needs a CUDA 12+ driver with virtual memory management");
  }
  fn = reinterpret_cast<F*>(p);
}

const Driver& driver() {
  static Driver d;
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    try {
      load(d.cuGetErrorString, "cuGetErrorString");
      load(d.cuDeviceGet, "cuDeviceGet");
      load(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
      load(d.cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity");
      load(d.cuMemCreate, "cuMemCreate");
      load(d.cuMemRelease, "cuMemRelease");
      load(d.cuMemExportToShareableHandle, "cuMemExportToShareableHandle");
      load(d.cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle");
      load(d.cuMemAddressReserve, "cuMemAddressReserve");
      load(d.cuMemAddressFree, "cuMemAddressFree");
      load(d.cuMemMap, "cuMemMap");
      load(d.cuMemUnmap, "cuMemUnmap");
      load(d.cuMemSetAccess, "cuMemSetAccess");
      load(d.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    } catch (const Error& e) {
      error = e.what();
    }
  });
  if (!error.empty()) throw Unsupported(error);
  return d;
}

namespace {
// A 64-bit stream memory operation's entry point (by name, loaded once) where the current device
// takes 64-bit stream memory operations (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, per
// device, cached), else null.
template <class Fn>
Fn stream_mem_op64(const char* name, Fn& fn, bool& loaded) {
  static std::mutex mu;
  static int ok_for[64] = {};  // per device: 0 unknown, 1 yes, -1 no
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
    (void)cudaGetLastError();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (!loaded) {
    loaded = true;
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) == cudaSuccess && q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<Fn>(p);
    (void)cudaGetLastError();
  }
  if (fn == nullptr) return nullptr;
  if (ok_for[dev] == 0) {
    int yes = 0;
    CUdevice d = 0;
    try {
      const Driver& drv = driver();
      if (drv.cuDeviceGet(&d, dev) != CUDA_SUCCESS ||
          drv.cuDeviceGetAttribute(&yes, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d) != CUDA_SUCCESS)
        yes = 0;
    } catch (...) {
      yes = 0;
    }
    ok_for[dev] = yes ? 1 : -1;
  }
  return ok_for[dev] > 0 ? fn : nullptr;
}
}  // namespace

StreamWriteValue64 stream_write_value64() {
  static StreamWriteValue64 fn = nullptr;
  static bool loaded = false;
  return stream_mem_op64("cuStreamWriteValue64", fn, loaded);
}

StreamWaitValue64 stream_wait_value64() {
  static StreamWaitValue64 fn = nullptr;
  static bool loaded = false;
  return stream_mem_op64("cuStreamWaitValue64", fn, loaded);
}

void throw_driver(CUresult rc, const char* expr, const char* file, int line) {
  const char* s = "unknown error";
  try {
    driver().cuGetErrorString(rc, &s);
  } catch (...) {
  }
  std::string msg = rank_prefix() + "CUDA driver call failed: " + expr + " returned " + std::to_string(rc) + " (" + s +
                    ") at " + file + ":" + std::to_string(line);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) msg += ". The GPU is out of memory: free buffers or ask for less.";
  throw CudaError(msg);
}

}  // namespace symmem::detail
