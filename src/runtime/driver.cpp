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
    } catch (const Error& e) {
      error = e.what();
    }
  });
  if (!error.empty()) throw Unsupported(error);
  return d;
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
