#pragma once
// The overlap tests' operands and their check (test_overlap.cu, test_overlap_random.cu): random
// bf16 / fp16 values, and a comparison against a host reference (gemm_reference's values and the
// sums of its terms' magnitudes) within a band that fits the dtype and a few roundings.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "reference.hpp"

namespace symmem::test {

// Random values of dt (bf16 or fp16) in [-1, 1): their bytes, and the values they hold.
inline std::vector<float> rand_half(DataType dt, size_t count, uint64_t seed, std::vector<uint8_t>* bytes) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  bytes->resize(count * 2);
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) {
    from_float(dt, u(g), &(*bytes)[2 * i]);
    v[i] = to_float(dt, &(*bytes)[2 * i]);
  }
  return v;
}

// '' or where got [rows, n] (of dt) differs from ref: within the sum of |terms| and |ref| times
// 2^-7 for bf16 (8 significant bits), 2^-9 for fp16 (11 bits; a few roundings of partial sums).
inline std::string compare(DataType dt, const std::vector<uint8_t>& got, const std::vector<double>& ref, const std::vector<double>& mag) {
  const double band = dt == DataType::kFloat16 ? 512.0 : 128.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = to_float(dt, &got[2 * i]);
    if (!(std::fabs(g - ref[i]) <= mag[i] / band + std::fabs(ref[i]) / band + 1e-3))
      return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(ref[i]);
  }
  return "";
}

}  // namespace symmem::test
