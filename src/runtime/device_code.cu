// device_code.hpp: the architecture the library's loaded kernels were generated for.
#include <cuda_runtime.h>

#include "device_code.hpp"

namespace symmem::detail {
namespace {
// Compiled with the library's architectures, as every other kernel of symmem_objects.
__global__ void code_probe_kernel() {}
}  // namespace

int device_code_arch() {
  static const int arch = [] {
    cudaFuncAttributes a{};
    if (cudaFuncGetAttributes(&a, code_probe_kernel) != cudaSuccess) {
      (void)cudaGetLastError();  // no code for this GPU (or no GPU): nothing of sm_90 is used
      return 0;
    }
    return a.ptxVersion * 10;
  }();
  return arch;
}

bool device_code_has_sm90() {
  static const bool yes = [] {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return major >= 9 && device_code_arch() >= 900;
  }();
  return yes;
}

}  // namespace symmem::detail
