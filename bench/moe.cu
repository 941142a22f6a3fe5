// symmem-bench moe: expert-parallel dispatch and combine, the issue's shapes, uniform and skewed
// routing, what Kernels::kAuto runs (column k) and both launch choices (two kernels a round: *_2k; one: *_1k). Dispatch is timed alone (graph replays); combine as (dispatch + combine) - dispatch,
// since a combine belongs to the dispatch before it. Beside them: NCCL moving the same rows as a
// graph-capturable all-to-all (every rank sends max_tokens rows to every peer: without a host
// round trip for the counts, the sizes must be the worst case). GB/s: remote bytes (rows sent to
// other ranks, once per destination rank) per rank over the time. The rows and the expert outputs
// are one constant byte and zeros (SYMMEM_MOE_DATA=random: random bf16 bit patterns in both; these
// kernels copy, far from a GPU's power cap, where a GEMM's clock depends on its data).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "pattern.cuh"

#include "harness.hpp"
#include "symmem/moe.hpp"

namespace symmem::bench {

namespace {
// What kAuto (or the config) runs: one kernel a round ("1k"), two ("2k"), or one for dispatch and
// two for combine ("1k/2k"); "ring/ring": the streamed dispatch and combine ("ring/2k": the
// combine's rounds after a streamed dispatch, SYMMEM_MOE_COMBINE_RING=0); "ll+": the dispatch
// through LL lines (a small round).
std::string launch_name(const moe::ExpertParallel& e) {
  const bool d = e.dispatch_one_kernel_per_round(), c = e.one_kernel_per_round();
  if (e.dispatch_lines()) return "ll+" + std::string(d == c ? (d ? "1k" : "2k") : (d ? "1k/2k" : "2k/1k"));
  if (e.dispatch_streamed()) return std::string("ring/") + (e.combine_streamed() ? "ring" : c ? "1k" : "2k");
  return d == c ? (d ? "1k" : "2k") : (d ? "1k/2k" : "2k/1k");
}
// SYMMEM_MOE_TRACE=1: where a dispatch + combine step spends its time. One step captured in a graph,
// replayed 21 times; after each, the kernels' phase stamps (ExpertParallel::trace_ns, one GPU's
// %globaltimer) give the phases below; median over replays, maximum over ranks, us.
void trace_phases(Harness& h, moe::ExpertParallel& ep, const std::function<void(cudaStream_t)>& step, const std::string& name) {
  struct Phase {
    const char* name;
    int from, to;
  };
  // Send halves (block 0's): d_send from its start to its stores fenced, split into b0_send (its
  // work) and s_fence; flags: its adds to every rank's flag. to_recv: to the receive half's start
  // (negative where one kernel a round starts it early), wait: until every sender's blocks arrived;
  // copy / sum: from there to the receive half's election (b0_*: block 0's own share, r_arrive:
  // the rest), epilogue: the elected block's bookkeeping. (A dispatch copy of at most one row a
  // warp elects after its claims, before its stores: there d_copy and b0_copy end with the
  // claims, and the stores, which run beside the epilogue, are in no phase. The one-kernel
  // dispatch whose senders claim elects no block: its receive phases are its last block's, which
  // publishes the counts after its claims, so d_b0_copy is that block's claims and d_r_arrive ~0.
  // The one-kernel combine elects no block: its c_sum ends with block 0's share, so c_r_arrive is
  // ~0 there and the others' tails are not seen.)
  const Phase phases[] = {{"d_send", 0, 1},     {"d_b0_send", 0, 13},   {"d_s_fence", 13, 1},  {"d_flags", 1, 2},
                          {"d_to_recv", 2, 3},  {"d_wait", 3, 4},       {"d_copy", 4, 5},      {"d_b0_copy", 4, 14},
                          {"d_r_arrive", 14, 5}, {"d_epilogue", 5, 6},  {"d_total", 0, 6},     {"to_combine", 6, 7},
                          {"c_send", 7, 8},     {"c_b0_send", 7, 15},   {"c_s_fence", 15, 8},  {"c_flags", 8, 9},
                          {"c_to_recv", 9, 10}, {"c_wait", 10, 11},     {"c_sum", 11, 12},     {"c_b0_sum", 11, 16},
                          {"c_r_arrive", 16, 12}, {"c_total", 7, 12},
                          // The lines dispatch's send block 0 (rounds over 8 tokens), where stamped:
                          {"dl_route", 0, 17},  {"dl_count", 17, 18},   {"dl_head", 18, 19},   {"dl_rows", 19, 13}};
  cudaStream_t s = h.stream();
  cudaGraph_t g;
  cudaGraphExec_t exec;
  SYMMEM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  step(s);
  SYMMEM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  SYMMEM_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  std::vector<std::vector<double>> d(std::size(phases));
  for (int rep = 0; rep < 21; ++rep) {
    h.line_up();  // (else a rank's wait includes the others' late start)
    SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    h.ctx().synchronize(s, "moe trace");
    const std::vector<uint64_t> t = ep.trace_ns();
    for (size_t i = 0; i < std::size(phases); ++i)
      d[i].push_back(t[phases[i].to] == 0 || t[phases[i].from] == 0 ? -1e9  // (not stamped: not printed)
                                                                      : (static_cast<double>(t[phases[i].to]) - static_cast<double>(t[phases[i].from])) / 1000.0);
  }
  SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  SYMMEM_CUDA_CHECK(cudaGraphDestroy(g));
  std::string line = "# trace " + name + " (us, median of 21 replays of one step, max over ranks):";
  for (size_t i = 0; i < std::size(phases); ++i) {
    std::sort(d[i].begin(), d[i].end());
    const double v = h.max_over_ranks(d[i][d[i].size() / 2]);
    if (v < -1e8) continue;
    char buf[64];
    std::snprintf(buf, sizeof(buf), " %s %.2f", phases[i].name, v);
    line += buf;
  }
  if (h.rank() == 0) std::printf("%s\n", line.c_str());
}
}  // namespace
namespace {

struct Shape {
  const char* name;
  int tokens, hidden, topk, experts;
  bool fp8;
  int capacity;  // rows per local expert; 0: nranks * tokens (never overflows)
};

// Routing of this rank: distinct experts per token; skewed sends 40% of the choices to 8 experts.
std::vector<int32_t> routing(const Shape& s, int rank, bool skewed) {
  std::mt19937_64 g(77 + rank * 1009 + (skewed ? 5 : 0));
  std::vector<int32_t> idx(static_cast<size_t>(s.tokens) * s.topk);
  for (int t = 0; t < s.tokens; ++t) {
    std::vector<int> chosen;
    for (int k = 0; k < s.topk; ++k) {
      int e;
      do e = skewed && g() % 10 < 4 ? static_cast<int>(g() % 8) : static_cast<int>(g() % s.experts);
      while (std::find(chosen.begin(), chosen.end(), e) != chosen.end());
      chosen.push_back(e);
      idx[static_cast<size_t>(t) * s.topk + k] = e;
    }
  }
  return idx;
}

}  // namespace

void run_moe(Harness& h) {
  const int n = h.size(), me = h.rank();
  const char* data = std::getenv("SYMMEM_MOE_DATA");
  const bool random_data = data != nullptr && std::string(data) == "random";
  require(data == nullptr || *data == 0 || random_data || std::string(data) == "constant",
          "symmem-bench moe: SYMMEM_MOE_DATA must be constant or random");
  const Shape shapes[] = {
      {"decode", 128, 7168, 8, 256, true, 0},       {"pplx_64e_1t", 1, 2048, 6, 64, false, 0},
      {"pplx_64e_128t", 128, 2048, 6, 64, false, 0}, {"pplx_256e_1t", 1, 7168, 8, 256, true, 0},
      {"pplx_64e_8t", 8, 2048, 6, 64, false, 0},     {"pplx_256e_8t", 8, 7168, 8, 256, true, 0},
      {"pplx_64e_16t", 16, 2048, 6, 64, false, 0},   {"pplx_256e_16t", 16, 7168, 8, 256, true, 0},
      {"pplx_64e_32t", 32, 2048, 6, 64, false, 0},   {"pplx_256e_32t", 32, 7168, 8, 256, true, 0},
      // Prefill: the skewed routing's hot experts get ~6.5k rows at 4 ranks; 8192 rows a local
      // expert bounds the outputs (3.8 GiB fp8 in, 7.5 GiB bf16 out at 4 ranks) where the
      // never-overflowing default would need 4x that.
      {"prefill", 4096, 7168, 8, 256, true, 8192},
  };
  if (me == 0) {
    std::printf("# symmem-bench moe: %d ranks, %s; time in us (dispatch; combine = pair - dispatch), remote GB/s per rank\n", n,
                h.gpu_name().c_str());
    std::printf("%16s %7s %6s | %9s %9s %8s %9s | %9s %9s %9s %9s | %9s %8s | %9s\n", "shape", "routing", "tokens", "dispatch", "combine",
                "disp_GBs", "k", "disp_2k", "comb_2k", "disp_1k", "comb_1k", "nccl_a2a", "nccl_GBs", "#wrong");
  }
  // SYMMEM_MOE_SHAPES (a comma-separated list of names, same on every rank): only those shapes.
  const char* only = std::getenv("SYMMEM_MOE_SHAPES");
  auto wanted = [&](const char* name) {
    if (only == nullptr || *only == 0) return true;
    const std::string list = std::string(",") + only + ",";
    return list.find(std::string(",") + name + ",") != std::string::npos;
  };
  for (const Shape& s : shapes) {
    if (s.experts % n != 0 || !wanted(s.name)) continue;
    for (bool skewed : {false, true}) {
      // Prefill moves its tokens in rounds of 1024 (bounded buffers, a quarter of the worst case;
      // SYMMEM_MOE_ROUND_TOKENS, the same on every rank, sets another size; session 11, 4 x H100:
      // dispatch 347 us at 1024 against 382 at 512); the others in one round.
      static const int round = [] {
        const char* v = std::getenv("SYMMEM_MOE_ROUND_TOKENS");
        return v != nullptr && *v != 0 ? static_cast<int>(detail::parse_int(v, "SYMMEM_MOE_ROUND_TOKENS", 1, 1 << 20)) : 1024;
      }();
      moe::Config cfg{s.hidden, s.topk, s.experts, s.tokens, s.capacity, s.fp8, false, s.tokens > round ? round : 0};
      moe::ExpertParallel ep(h.comm(), cfg);
      const int El = ep.local_experts(), C = ep.capacity();
      const size_t es = s.fp8 ? 1 : 2, groups = (s.hidden + 127) / 128;
      const size_t row = static_cast<size_t>(s.hidden) * es;
      auto idx = routing(s, me, skewed);
      void *x, *sc, *di, *rx, *rsc, *cnt, *y, *out;
      SYMMEM_CUDA_CHECK(cudaMalloc(&x, s.tokens * row));
      SYMMEM_CUDA_CHECK(cudaMalloc(&sc, s.tokens * groups * 4));
      SYMMEM_CUDA_CHECK(cudaMalloc(&di, idx.size() * 4));
      SYMMEM_CUDA_CHECK(cudaMalloc(&rx, static_cast<size_t>(El) * C * row));
      SYMMEM_CUDA_CHECK(cudaMalloc(&rsc, static_cast<size_t>(El) * C * groups * 4));
      SYMMEM_CUDA_CHECK(cudaMalloc(&cnt, El * 4));
      SYMMEM_CUDA_CHECK(cudaMalloc(&y, static_cast<size_t>(El) * C * s.hidden * 2));
      SYMMEM_CUDA_CHECK(cudaMalloc(&out, static_cast<size_t>(s.tokens) * s.hidden * 2));
      SYMMEM_CUDA_CHECK(cudaMemset(x, 0x11, s.tokens * row));
      SYMMEM_CUDA_CHECK(cudaMemset(sc, 0, s.tokens * groups * 4));
      SYMMEM_CUDA_CHECK(cudaMemset(y, 0, static_cast<size_t>(El) * C * s.hidden * 2));
      if (random_data) {
        fill_bf16_kernel<<<1024, 256, 0, h.stream()>>>(static_cast<uint16_t*>(x), s.tokens * row / 2, (uint64_t(me) << 8) + 1);
        fill_bf16_kernel<<<1024, 256, 0, h.stream()>>>(static_cast<uint16_t*>(y), static_cast<size_t>(El) * C * s.hidden, (uint64_t(me) << 8) + 2);
        SYMMEM_CUDA_CHECK(cudaGetLastError());
        SYMMEM_CUDA_CHECK(cudaStreamSynchronize(h.stream()));
      }
      SYMMEM_CUDA_CHECK(cudaMemcpy(di, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
      moe::DispatchIn din{x, static_cast<float*>(sc), di, false, nullptr, s.tokens};
      moe::DispatchOut dout{rx, static_cast<float*>(rsc), static_cast<int*>(cnt)};
      const int ops = std::max(1, std::min(h.opt().iters, s.tokens >= 1024 ? 5 : h.opt().iters));
      auto time_ep = [&](moe::ExpertParallel& e, double* pair_us) {
        const double d = h.time_graph([&](cudaStream_t st) { e.dispatch(din, dout, st); }, ops);
        *pair_us = h.time_graph([&](cudaStream_t st) {
          e.dispatch(din, dout, st);
          e.combine(y, out, true, st);
        }, ops);
        return d;
      };
      auto trace = [&](moe::ExpertParallel& e) {
        if (!e.trace_ns().empty()) trace_phases(h, e, [&](cudaStream_t st) {
            e.dispatch(din, dout, st);
            e.combine(y, out, true, st);
          }, std::string(s.name) + (skewed ? "/skewed" : "/uniform") + " " + launch_name(e));
      };
      // The launch choices kAuto did not make, beside it (one kernel only where ranks have their own
      // GPUs): columns disp_2k/comb_2k (two kernels a round) and disp_1k/comb_1k (one). kAuto may take
      // one kernel for dispatch and two for combine ("1k/2k"), and then both others run.
      // (A streamed dispatch is neither: both choices run beside it, each with its rounds.)
      const bool streamed = ep.dispatch_streamed();
      const bool auto_d = ep.dispatch_one_kernel_per_round(), auto_c = ep.one_kernel_per_round();
      const bool auto_one = !streamed && auto_d && auto_c, auto_two = !streamed && !auto_d && !auto_c;
      double disp1 = -1, pair1 = -1, disp2 = -1, pair2 = -1;
      for (moe::Kernels k : {moe::Kernels::kTwo, moe::Kernels::kOne}) {
        const bool one = k == moe::Kernels::kOne;
        if ((one ? auto_one : auto_two) || (one && h.comm().shares_gpu())) continue;
        moe::Config c1 = cfg;
        c1.kernels = k;
        moe::ExpertParallel ep1(h.comm(), c1);
        (one ? disp1 : disp2) = time_ep(ep1, one ? &pair1 : &pair2);
        trace(ep1);
      }
      double pair = 0;
      const double disp = time_ep(ep, &pair);  // last: the counts checked below are the default path's
      trace(ep);
      if (auto_one) disp1 = disp, pair1 = pair;
      if (auto_two) disp2 = disp, pair2 = pair;
      // Check: every rank's expert counts add up to what the routing says it receives.
      h.ctx().synchronize(h.stream(), "moe bench");
      std::vector<int> got(El);
      SYMMEM_CUDA_CHECK(cudaMemcpy(got.data(), cnt, El * 4, cudaMemcpyDeviceToHost));
      long want = 0, have = 0, remote_rows = 0;
      for (int r = 0; r < n; ++r) {
        auto ir = routing(s, r, skewed);
        for (size_t i = 0; i < ir.size(); ++i) want += ir[i] / El == me;
        if (r == me)
          for (int t = 0; t < s.tokens; ++t) {
            uint64_t mask = 0;
            for (int k = 0; k < s.topk; ++k) mask |= 1ull << (ir[static_cast<size_t>(t) * s.topk + k] / El);
            remote_rows += __builtin_popcountll(mask & ~(1ull << me));
          }
      }
      for (int c : got) have += c;
      const long wrong = h.sum_over_ranks(have == want ? 0 : 1);
      // NCCL: the same rows as a worst-case-sized all-to-all (max_tokens rows to every peer).
      double nccl = -1;
      if (h.nccl() != nullptr) {
        void *sb, *rb;
        const size_t per = static_cast<size_t>(s.tokens) * (row + (s.fp8 ? groups * 4 : 0));
        SYMMEM_CUDA_CHECK(cudaMalloc(&sb, per * n));
        SYMMEM_CUDA_CHECK(cudaMalloc(&rb, per * n));
        ncclComm_t nc = h.nccl();
        nccl = h.time_graph([&](cudaStream_t st) {
          ncclGroupStart();
          for (int p = 0; p < n; ++p) {
            ncclSend(static_cast<char*>(sb) + p * per, per, ncclInt8, p, nc, st);
            ncclRecv(static_cast<char*>(rb) + p * per, per, ncclInt8, p, nc, st);
          }
          ncclGroupEnd();
        }, ops);
        cudaFree(sb);
        cudaFree(rb);
      }
      const double rows_max = h.max_over_ranks(static_cast<double>(remote_rows));
      const double remote_bytes = rows_max * row, combine_bytes = rows_max * s.hidden * 2;  // combine: bf16 rows back
      Row r{"moe", s.fp8 ? "fp8" : "bfloat16", std::string(s.name) + (skewed ? "/skewed" : "/uniform"), static_cast<size_t>(s.tokens)};
      r.symmem_us = disp;
      r.nccl_us = nccl;
      r.wrong = wrong;
      r.extra["combine_us"] = pair - disp;
      r.extra["dispatch_combine_us"] = pair;
      r.extra["remote_bytes"] = remote_bytes;
      r.extra["dispatch_gbps"] = remote_bytes / disp / 1000.0;
      r.extra["combine_gbps"] = pair > disp ? combine_bytes / (pair - disp) / 1000.0 : -1;
      r.extra["nccl_gbps"] = nccl > 0 ? remote_bytes / nccl / 1000.0 : -1;
      r.extra["bytes_per_rank"] = static_cast<double>(ep.bytes_per_rank());
      r.extra["auto_one_kernel"] = auto_one ? 1 : 0;
      r.extra["auto_dispatch_one_kernel"] = !streamed && auto_d ? 1 : 0;
      r.extra["auto_dispatch_streamed"] = streamed ? 1 : 0;
      r.extra["auto_combine_streamed"] = ep.combine_streamed() ? 1 : 0;
      r.extra["auto_dispatch_lines"] = ep.dispatch_lines() ? 1 : 0;
      r.extra["one_kernel_dispatch_us"] = disp1;
      r.extra["one_kernel_combine_us"] = disp1 > 0 ? pair1 - disp1 : -1;
      r.extra["two_kernels_dispatch_us"] = disp2;
      r.extra["two_kernels_combine_us"] = disp2 > 0 ? pair2 - disp2 : -1;
      h.add(r);
      if (me == 0)
        std::printf("%16s %7s %6d | %9.2f %9.2f %8.1f %9s | %9.2f %9.2f %9.2f %9.2f | %9.2f %8.1f | %9ld\n", s.name,
                    skewed ? "skewed" : "uniform", s.tokens, disp, pair - disp, r.extra["dispatch_gbps"], launch_name(ep).c_str(), disp2,
                    r.extra["two_kernels_combine_us"], disp1, r.extra["one_kernel_combine_us"], nccl, r.extra["nccl_gbps"], wrong);
      for (void* p : {x, sc, di, rx, rsc, cnt, y, out}) cudaFree(p);
    }
  }
}

}  // namespace symmem::bench
