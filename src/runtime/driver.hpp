#pragma once
// CUDA driver entry points, loaded through the runtime so the library needs no libcuda at link
// time (host tests run on machines without a driver).
#include <cuda.h>

#include <string>

namespace symmem::detail {

struct Driver {
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*cuMemGetAllocationGranularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags);
  CUresult (*cuMemCreate)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long);
  CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
  CUresult (*cuMemExportToShareableHandle)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType, unsigned long long);
  CUresult (*cuMemImportFromShareableHandle)(CUmemGenericAllocationHandle*, void*, CUmemAllocationHandleType);
  CUresult (*cuMemAddressReserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*cuMemAddressFree)(CUdeviceptr, size_t);
  CUresult (*cuMemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*cuMemUnmap)(CUdeviceptr, size_t);
  CUresult (*cuMemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                     const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);  // (the Hopper GEMM's TMA maps)
};

/// Loads the entry points once; throws Unsupported when the driver is missing.
const Driver& driver();

/// cuStreamWriteValue64 where the driver has it and the current device takes 64-bit stream memory
/// operations (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS), else null: a write of a value
/// from a stream with no kernel, so no SM (a copy engine put's signal). Per device, cached.
using StreamWriteValue64 = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
StreamWriteValue64 stream_write_value64();
/// cuStreamWaitValue64 on the same terms: a stream waits for a word with no kernel, so no SM (a
/// copy engine put waiting for a kernel that still runs to count its rows).
using StreamWaitValue64 = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
StreamWaitValue64 stream_wait_value64();

[[noreturn]] void throw_driver(CUresult rc, const char* expr, const char* file, int line);

}  // namespace symmem::detail

#define SYMMEM_CU_CHECK(expr)                                                        \
  do {                                                                               \
    CUresult symmem_rc_ = (expr);                                                    \
    if (symmem_rc_ != CUDA_SUCCESS) ::symmem::detail::throw_driver(symmem_rc_, #expr, __FILE__, __LINE__); \
  } while (0)
