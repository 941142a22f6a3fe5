#pragma once
// Shared state of the GPU test binary: one context and heap per process, random data helpers.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "symmem/symmem.hpp"

namespace symmem::test {

std::shared_ptr<Context>& ctx();
Heap& heap();

/// Deterministic random bytes: any rank can regenerate any other rank's data.
inline std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 1);
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t x = g();
    for (size_t k = 0; k < 8 && i + k < n; ++k) v[i + k] = static_cast<uint8_t>(x >> (8 * k));
  }
  return v;
}

/// Device memory that frees itself.
struct DeviceBuffer {
  void* p = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t bytes) : n(bytes) { SYMMEM_CUDA_CHECK(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { cudaFree(p); }
  template <class T> T* as() const { return static_cast<T*>(p); }
};

inline void upload(void* dst, const std::vector<uint8_t>& v) {
  SYMMEM_CUDA_CHECK(cudaMemcpy(dst, v.data(), v.size(), cudaMemcpyHostToDevice));
}
inline std::vector<uint8_t> download(const void* src, size_t n) {
  std::vector<uint8_t> v(n);
  SYMMEM_CUDA_CHECK(cudaMemcpy(v.data(), src, n, cudaMemcpyDeviceToHost));
  return v;
}
constexpr uint8_t kPoison = 0xCD;

/// Index of the first differing byte, or -1.
inline long first_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return static_cast<long>(i);
  return -1;
}

}  // namespace symmem::test
