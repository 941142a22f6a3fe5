#pragma once
// The order in which graphs replayed in turn run in one timed round (symmem-bench's
// Harness::time_graphs, the device probes' replay_medians): a shuffle drawn from the round's
// number alone, alike on every rank (the benchmark's programs communicate), so that every program
// follows every other about equally often. A power-capped GPU's clock follows what it ran just
// before: in a fixed rotation program g always ran after g - 1 (symmem-bench's second
// TensorParallel read 0-64 us slower than an identical first one, 4 x H100, session 37; in
// session 65 the probe's fourth graph read 4-7% slower than the second at 70B shapes, whichever
// raster either ran, one H200).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace symmem::bench {

inline std::vector<size_t> round_order(size_t programs, int round) {
  std::vector<size_t> order(programs);
  for (size_t i = 0; i < programs; ++i) order[i] = i;
  uint64_t x = 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(round) + 1);
  auto next = [&x] {  // splitmix64
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (size_t i = programs; i > 1; --i) std::swap(order[i - 1], order[next() % i]);  // Fisher-Yates
  return order;
}

/// The old order, for comparisons (SYMMEM_BENCH_ORDER=rotate): round r runs r, r + 1, ... mod P.
inline std::vector<size_t> rotated_order(size_t programs, int round) {
  std::vector<size_t> order(programs);
  for (size_t i = 0; i < programs; ++i) order[i] = (i + static_cast<size_t>(round)) % programs;
  return order;
}

}  // namespace symmem::bench
