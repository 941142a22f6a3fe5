// Does a compute-sanitizer tool handle memory that the driver's virtual-memory calls mapped (the
// way symmem's heap maps every arena: cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess)?
// Session 103's initcheck run of symmem_gpu_tests stopped at the heap's first cudaMemset of such
// memory with "unspecified launch failure", the tool reporting nothing. This probe takes the same
// steps in one process with nothing else around them, each against cudaMalloc'd memory first:
// a cudaMemset, a kernel writing, a kernel reading. The memory is exported as a file descriptor, as
// the heap does; with the argument `entry` the cuMem* calls go through pointers that
// cudaGetDriverEntryPointByVersion gave, as the heap's do (src/runtime/driver.cpp). Run plain, then
// under the tool:
//   nvcc -std=c++17 -arch=sm_90 -lcuda -o vmm-probe tools/vmm_sanitizer_probe.cu
//   ./vmm-probe [entry] && compute-sanitizer --tool initcheck ./vmm-probe [entry]
// It prints a line a step and exits 1 at the first step that fails.
// Session 103 (H200, compute-sanitizer 2025.3.1): without the export every step ran under
// initcheck; with it, linked or through the entry points, initcheck's cudaMemset of the mapped
// memory failed ("unspecified launch failure", no report), while memcheck and racecheck ran every
// step. So initcheck is a tool symmem's heap cannot be checked with (tools/steps/s103-vmm-x1.sh).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace {
__global__ void fill(unsigned* p, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = unsigned(i) * 2654435761u;
}
__global__ void sum(const unsigned* p, size_t n, unsigned* out) {
  unsigned s = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) s += p[i];
  atomicAdd(out, s);
}

bool step(const char* what, cudaError_t e) {
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  std::printf("vmm-probe: %-44s %s\n", what, e == cudaSuccess ? "ok" : cudaGetErrorString(e));
  return e == cudaSuccess;
}
bool drv(const char* what, CUresult r) {
  const char* s = nullptr;
  if (r != CUDA_SUCCESS) cuGetErrorString(r, &s);
  std::printf("vmm-probe: %-44s %s\n", what, r == CUDA_SUCCESS ? "ok" : (s ? s : "error"));
  return r == CUDA_SUCCESS;
}

// The three steps on n words at p.
bool exercise(const char* kind, unsigned* p, size_t n, unsigned* out) {
  char what[64];
  std::snprintf(what, sizeof what, "%s: cudaMemset", kind);
  if (!step(what, cudaMemset(p, 0, n * sizeof(unsigned)))) return false;
  std::snprintf(what, sizeof what, "%s: kernel write", kind);
  fill<<<64, 256>>>(p, n);
  if (!step(what, cudaGetLastError())) return false;
  std::snprintf(what, sizeof what, "%s: kernel read", kind);
  sum<<<64, 256>>>(p, n, out);
  return step(what, cudaGetLastError());
}
}  // namespace

// The driver's calls, linked or through the runtime's entry points.
struct Driver {
  decltype(&cuMemGetAllocationGranularity) granularity = cuMemGetAllocationGranularity;
  decltype(&cuMemCreate) create = cuMemCreate;
  decltype(&cuMemExportToShareableHandle) export_fd = cuMemExportToShareableHandle;
  decltype(&cuMemAddressReserve) reserve = cuMemAddressReserve;
  decltype(&cuMemMap) map = cuMemMap;
  decltype(&cuMemSetAccess) access = cuMemSetAccess;
  template <class F>
  static bool entry(const char* name, F& f) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess || q != cudaDriverEntryPointSuccess) return false;
    f = reinterpret_cast<F>(p);
    return true;
  }
  bool from_entry_points() {
    return entry("cuMemGetAllocationGranularity", granularity) && entry("cuMemCreate", create) &&
           entry("cuMemExportToShareableHandle", export_fd) && entry("cuMemAddressReserve", reserve) && entry("cuMemMap", map) &&
           entry("cuMemSetAccess", access);
  }
};

int main(int argc, char** argv) {
  const bool by_entry = argc > 1 && std::strcmp(argv[1], "entry") == 0;
  int dev = 0;
  if (cudaSetDevice(dev) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "vmm-probe: no GPU\n");
    return 2;
  }
  unsigned* out = nullptr;
  if (!step("cudaMalloc (the result word)", cudaMalloc(&out, sizeof(unsigned))) || !step("cudaMemset (the result word)", cudaMemset(out, 0, 4)))
    return 1;
  const size_t n = size_t(1) << 20;
  unsigned* plain = nullptr;
  if (!step("cudaMalloc", cudaMalloc(&plain, n * sizeof(unsigned))) || !exercise("cudaMalloc'd", plain, n, out)) return 1;

  Driver d;
  if (by_entry && !d.from_entry_points()) {
    std::printf("vmm-probe: cudaGetDriverEntryPointByVersion failed\n");
    return 1;
  }
  std::printf("vmm-probe: the driver's calls %s\n", by_entry ? "through the runtime's entry points" : "linked");
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;  // (as the heap asks: shareable)
  size_t gran = 0;
  if (!drv("cuMemGetAllocationGranularity", d.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))) return 1;
  const size_t bytes = (n * sizeof(unsigned) + gran - 1) / gran * gran;
  CUmemGenericAllocationHandle h{};
  CUdeviceptr va = 0;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  int fd = -1;
  if (!drv("cuMemCreate", d.create(&h, bytes, &prop, 0)) ||
      !drv("cuMemExportToShareableHandle", d.export_fd(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) ||
      !drv("cuMemAddressReserve", d.reserve(&va, bytes, gran, 0, 0)) || !drv("cuMemMap", d.map(va, bytes, 0, h, 0)) ||
      !drv("cuMemSetAccess", d.access(va, bytes, &access, 1)))
    return 1;
  close(fd);
  if (!exercise("cuMemMap'd", reinterpret_cast<unsigned*>(va), n, out)) return 1;
  cuMemUnmap(va, bytes);
  cuMemAddressFree(va, bytes);
  cuMemRelease(h);
  cudaFree(plain);
  cudaFree(out);
  std::printf("vmm-probe: every step ran\n");
  return 0;
}
