// How many thread-block clusters of each size fit on this GPU at once for a kernel shaped as
// hopper_gemm_t's (384 threads, one CTA an SM, ~221 KiB of shared memory): the first check of the
// "clusters of 2 x 2" idea (docs/NOTES.md), which pays only if 4-CTA clusters cover the SMs as
// well as 2-CTA ones do (a GPC whose SM count is not a multiple of 4 idles the rest).
//   nvcc -std=c++17 -arch=sm_90a -o cluster-fit tools/cluster_fit_probe.cu && ./cluster-fit [smem_bytes]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void __launch_bounds__(384, 1) shaped_like_the_gemm(int* sink) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0 && sink != nullptr) *sink = smem[0];
}

int main(int argc, char** argv) {
  // hopper_gemm_t's kSmemBytes: 5 stages x (20 + 16) KiB + two 20 KiB C boxes + barriers + 1 KiB.
  const int smem = argc > 1 ? std::atoi(argv[1]) : 5 * (20480 + 16384) + 2 * 20480 + 13 * 8 + 1024;
  int dev = 0, sms = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    std::fprintf(stderr, "cluster-fit: no GPU\n");
    return 2;
  }
  sms = prop.multiProcessorCount;
  if (cudaFuncSetAttribute(shaped_like_the_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess ||
      cudaFuncSetAttribute(shaped_like_the_gemm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
    std::fprintf(stderr, "cluster-fit: cannot set the kernel's attributes (%s)\n", cudaGetErrorString(cudaGetLastError()));
    return 2;
  }
  std::printf("%s, %d SMs, %d bytes of shared memory a CTA\n", prop.name, sms, smem);
  for (int size : {1, 2, 3, 4, 6, 8, 16}) {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = size;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3(size * 64, 1, 1);
    cfg.blockDim = dim3(384, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = 0;
    const cudaError_t rc = cudaOccupancyMaxActiveClusters(&n, shaped_like_the_gemm, &cfg);
    if (rc != cudaSuccess) {
      std::printf("cluster %2d: %s\n", size, cudaGetErrorString(rc));
      (void)cudaGetLastError();
      continue;
    }
    std::printf("cluster %2d: %3d clusters at once, %3d of %d SMs busy (%.1f%%)\n", size, n, n * size, sms, 100.0 * n * size / sms);
  }
  return 0;
}
