#pragma once
// Data the benchmarks move and check: byte i of rank r's data is a hash of (r, i), so any rank can
// verify any other rank's bytes on the GPU without copying them around.
#include <cstddef>
#include <cstdint>

namespace symmem::bench {

__host__ __device__ inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}
__host__ __device__ inline uint8_t pattern_byte(uint64_t seed, size_t i) {
  return static_cast<uint8_t>(mix64((i >> 3) * 0x9E3779B97F4A7C15ull + seed * 0xD1B54A32D192ED03ull + 1) >> (8 * (i & 7)));
}

namespace {  // (kernels: a copy in each benchmark that includes this)
__global__ void fill_pattern_kernel(uint8_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = pattern_byte(seed, i);
}
__global__ void count_wrong_kernel(const uint8_t* p, size_t n, uint64_t seed, unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    bad += p[i] != pattern_byte(seed, i);
  if (bad) atomicAdd(wrong, bad);
}

// bf16 values uniform in [-1, 1) from a hash of (seed, i): operands for timing (a GEMM's power, and
// so its clock under the power cap, depends on its data: constant operands toggle fewer bits).
__global__ void fill_bf16_kernel(uint16_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float f = static_cast<float>(mix64(i * 0x9E3779B97F4A7C15ull + seed) & 0xFFFF) / 32768.0f - 1.0f;
    p[i] = static_cast<uint16_t>(__float_as_uint(f) >> 16);
  }
}
// bf16 values normal (mean 0, deviation 1) from a hash of (seed, i), by Box-Muller: the operands
// torch.randn gives PyTorch's harnesses (python -m symmem.bench), for timing beside them.
__global__ void fill_bf16_normal_kernel(uint16_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t h = mix64(i * 0x9E3779B97F4A7C15ull + seed);
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) / 16777217.0f;  // (0, 1)
    const float u2 = static_cast<float>((h >> 16) & 0xFFFFFF) / 16777216.0f;
    const float f = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    p[i] = static_cast<uint16_t>(__float_as_uint(f) >> 16);
  }
}
}  // namespace

}  // namespace symmem::bench
