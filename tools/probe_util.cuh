#pragma once
// Shared by the device probes (tools/hgemm_probe.cu): the CUDA check, and
// the timing of CUDA graphs replayed in turn.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "../bench/cuda_check.hpp"
#include "../bench/round_order.hpp"
#include "../bench/spin.cuh"

// Median us of one launch of each variant: each variant's `ops` launches captured in one graph,
// the graphs replayed in turn (3 warm-up rounds, then `reps`), so that every variant runs at the
// same clocks (a GPU at its power cap follows what it ran last), each round in an order of its own
// (round_order, as symmem-bench's: until session 65 a fixed rotation, in which the fourth graph
// read 4-7% slower than the second at 70B shapes whatever either ran). A variant with skip[w] set
// is neither replayed nor timed (0). SYMMEM_BENCH_IDLE_US=us (as symmem-bench's): one GPU thread
// spins that long before each replay, the GPU near idle (its SMs at boost clocks, not the cap).
inline std::vector<float> replay_medians(const std::vector<std::function<void(cudaStream_t)>>& variants, int ops, int reps,
                                         const std::vector<bool>& skip = {}) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<cudaGraphExec_t> ex(variants.size());
  for (size_t w = 0; w < variants.size(); ++w) {
    cudaGraph_t graph;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < ops; ++i) variants[w](s);
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaGraphInstantiate(&ex[w], graph, 0));
    CK(cudaGraphDestroy(graph));
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<std::vector<float>> t(variants.size());
  const unsigned long long idle_ns = symmem::bench::idle_ns_from_env();
  for (int i = 0; i < reps + 3; ++i)
    for (size_t w : symmem::bench::round_order(variants.size(), i)) {
      if (w < skip.size() && skip[w]) continue;
      if (idle_ns > 0) symmem::bench::spin_kernel<<<1, 1, 0, s>>>(idle_ns);
      CK(cudaEventRecord(e0, s));
      CK(cudaGraphLaunch(ex[w], s));
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (i >= 3) t[w].push_back(ms * 1000 / ops);
    }
  std::vector<float> med(variants.size(), 0.0f);
  for (size_t w = 0; w < variants.size(); ++w) {
    std::sort(t[w].begin(), t[w].end());
    if (!t[w].empty()) med[w] = t[w][t[w].size() / 2];
  }
  for (auto& x : ex) CK(cudaGraphExecDestroy(x));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaStreamDestroy(s));
  return med;
}
