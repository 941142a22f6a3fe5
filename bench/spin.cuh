#pragma once
// One GPU thread spinning for `ns` nanoseconds (by the global timer): symmem-bench's harness runs
// it before each timed replay so that the host has queued what follows (barrier, start event,
// graph launch) before the GPU gets there, and, with SYMMEM_BENCH_IDLE_US, as a near-idle span
// before each replay (the GPU below its power cap, its SMs at boost clocks, as in an engine's
// bursts); the device probes (tools/probe_util.cuh) take the same variable.
#include <cuda_runtime.h>

#include <cstdlib>

#include "symmem/env.hpp"

namespace symmem::bench {

static __global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

/// SYMMEM_BENCH_IDLE_US in ns (0 to 100000 us; unset or empty: 0), the one reading of it.
inline unsigned long long idle_ns_from_env() {
  const char* idle = std::getenv("SYMMEM_BENCH_IDLE_US");
  return idle != nullptr && *idle != 0 ? 1000ull * static_cast<unsigned long long>(detail::parse_int(idle, "SYMMEM_BENCH_IDLE_US", 0, 100000)) : 0;
}

}  // namespace symmem::bench
