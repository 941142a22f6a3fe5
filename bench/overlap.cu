// symmem-bench overlap: all-gather + GEMM and GEMM + reduce-scatter on the MLP shapes of Llama-3
// 8B and 70B at TP = the ranks of this run, M in {2048, 4096, 8192, 16384}. Beside symmem
// (overlap and sequential): the cuBLASLt GEMM alone on the full problem (the floor), and cuBLASLt
// with NCCL one after the other. CUDA-graph replays, median, max over ranks. SYMMEM_OVERLAP_MODELS=8B
// (or 70B) times one model only, SYMMEM_OVERLAP_M=16384 (a comma-separated list) those M only.
// Operands are random, uniform in [-1, 1) (SYMMEM_OVERLAP_DATA=normal: torch.randn's distribution;
// =constant: one value everywhere, as before session 31; at the power cap a GEMM runs 15-25%
// faster on it). SYMMEM_OVERLAP_PROBE=1 adds diagnostics;
// SYMMEM_OVERLAP_ALT=own|cublas times a second TensorParallel (made under that SYMMEM_OVERLAP_GEMM,
// or under the VAR=value;... list given) beside the first, interleaved (column alt);
// SYMMEM_OVERLAP_TWINS=c times each column on c instances made alike (the median).
// The floor, symmem's two paths and cuBLASLt + NCCL of one shape are timed together, their replays
// interleaved (Harness::time_graphs): a power-capped GPU's clock depends on what it ran just before.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../src/overlap/gemm.hpp"
#include "../src/overlap/hopper_gemm.hpp"
#include "../src/overlap/overlap_kernels.hpp"
#include "harness.hpp"
#include "pattern.cuh"
#include "symmem/overlap.hpp"

namespace symmem::bench {

void run_overlap(Harness& h) {
  const int n = h.size(), me = h.rank();
  h.set_clock_sampling(true);  // (each program's SM clock and power in the rows; SYMMEM_BENCH_CLOCKS=0: off)
  struct Model { const char* name; int64_t hidden, ffn; };
  const Model models[] = {{"8B", 4096, 14336}, {"70B", 8192, 28672}};
  const int64_t ms[] = {2048, 4096, 8192, 16384};
  int64_t max_m = 16384, max_k = 0, max_n = 0;
  for (const Model& md : models) {
    max_k = std::max({max_k, md.hidden, md.ffn / n});
    max_n = std::max({max_n, md.ffn / n, md.hidden});
  }
  // SYMMEM_OVERLAP_ALT=own or cublas: a second TensorParallel made with SYMMEM_OVERLAP_GEMM set to
  // that, whose overlap path is timed interleaved with the others (column alt, key overlap_alt_us):
  // the two forms compared in one power state. Or VAR=value[;VAR=value...]: those variables set
  // while the second one is made (e.g. SYMMEM_OVERLAP_RS=sum), restored after. The alt column read
  // 0-64 us slower at 70B mm+rs even when both instances were made alike (4 x H100, session 37):
  // time two forms each in each column. SYMMEM_OVERLAP_ALT_FIRST=1 makes the alt instance before
  // the main one (does the bias follow the order of making or the column?).
  const char* alt_env = std::getenv("SYMMEM_OVERLAP_ALT");
  const char* alt_first_env = std::getenv("SYMMEM_OVERLAP_ALT_FIRST");
  const bool alt_first = alt_first_env != nullptr && std::strcmp(alt_first_env, "1") == 0;
  // SYMMEM_OVERLAP_TWINS=c (1-4): each column's overlap timed on c instances made alike, its figure
  // the median over them (each instance's in the row's overlap_twins_us / alt_twins_us): two
  // identical instances of one run have read 1-3% apart (session 65; their clocks too), so an A/B
  // of one instance a column needs several runs.
  const char* twins_env = std::getenv("SYMMEM_OVERLAP_TWINS");
  const int twins = twins_env != nullptr && *twins_env != 0 ? static_cast<int>(detail::parse_int(twins_env, "SYMMEM_OVERLAP_TWINS", 1, 4)) : 1;
  std::unique_ptr<overlap::TensorParallel> tp_alt;
  std::vector<std::unique_ptr<overlap::TensorParallel>> alt_twins;  // (the alt column's other instances)
  auto make_alt = [&] {
    if (alt_env == nullptr || *alt_env == 0) return;
    std::vector<std::pair<std::string, std::string>> sets;  // (variable, value)
    const std::string spec = alt_env;
    if (spec.find('=') == std::string::npos) {
      sets.emplace_back("SYMMEM_OVERLAP_GEMM", spec);
    } else {
      for (size_t at = 0; at <= spec.size();) {
        const size_t end = std::min(spec.find(';', at), spec.size()), eq = spec.find('=', at);
        require(eq < end, "symmem-bench overlap: SYMMEM_OVERLAP_ALT=", spec, ": each item must be VAR=value");
        sets.emplace_back(spec.substr(at, eq - at), spec.substr(eq + 1, end - eq - 1));
        at = end + 1;
      }
    }
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;  // (variable, its value before)
    for (const auto& [var, value] : sets) {
      const char* was = std::getenv(var.c_str());
      saved.emplace_back(var, was != nullptr ? std::optional<std::string>(was) : std::nullopt);
      setenv(var.c_str(), value.c_str(), 1);
    }
    tp_alt = std::make_unique<overlap::TensorParallel>(h.comm(), max_m, max_k, max_n);
    for (int i = 1; i < twins; ++i) alt_twins.push_back(std::make_unique<overlap::TensorParallel>(h.comm(), max_m, max_k, max_n));
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {  // (in reverse: a variable listed twice ends as it was)
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  };
  // SYMMEM_OVERLAP_SPACER=s (0-4): s instances made, kept and never run, before any timed one (the
  // first instance made has read 1-3% faster than its twins at 70B mm+rs M 16384, session 66: its
  // place in memory, or its being the one the sequential column runs on?).
  const char* spacer_env = std::getenv("SYMMEM_OVERLAP_SPACER");
  const int spacers = spacer_env != nullptr && *spacer_env != 0 ? static_cast<int>(detail::parse_int(spacer_env, "SYMMEM_OVERLAP_SPACER", 0, 4)) : 0;
  std::vector<std::unique_ptr<overlap::TensorParallel>> spacer;
  for (int i = 0; i < spacers; ++i) spacer.push_back(std::make_unique<overlap::TensorParallel>(h.comm(), max_m, max_k, max_n));
  if (alt_first) make_alt();
  overlap::TensorParallel tp(h.comm(), max_m, max_k, max_n);
  std::vector<std::unique_ptr<overlap::TensorParallel>> tp_twins;  // (the main column's other instances)
  for (int i = 1; i < twins; ++i) tp_twins.push_back(std::make_unique<overlap::TensorParallel>(h.comm(), max_m, max_k, max_n));
  if (!alt_first) make_alt();
  overlap::Gemm gemm(size_t(32) << 20);
  // The floor (and cuBLASLt + NCCL) runs cuBLASLt's fastest plan for the full GEMM at the power
  // cap: every candidate of its heuristic, each in a Gemm of its own, timed as graphs replayed in
  // turn with the others (Harness::time_graphs), and the fastest kept by `gemm` (pick_floor).
  // Symmem's Gemm tunes on bursts of a few launches, which at the cap can rank the plans otherwise
  // (session 56, one H200: its pick for 16384 x 14336 x 8192 ran 6% slower than the best, and
  // until its rounds the floor of a shape moved by 3-7% from run to run with its pick).
  std::vector<std::unique_ptr<overlap::Gemm>> cand_gemms;
  void *a, *b, *c, *shard;
  SYMMEM_CUDA_CHECK(cudaMalloc(&a, static_cast<size_t>(max_m) * max_k * 2));
  SYMMEM_CUDA_CHECK(cudaMalloc(&b, static_cast<size_t>(max_k) * max_n * 2));
  SYMMEM_CUDA_CHECK(cudaMalloc(&c, static_cast<size_t>(max_m) * max_n * 2));
  SYMMEM_CUDA_CHECK(cudaMalloc(&shard, static_cast<size_t>(max_m) * max_k * 2));
  // Operands: random bf16 in [-1, 1) (the default), SYMMEM_OVERLAP_DATA=normal (mean 0, deviation
  // 1: torch.randn's, as python -m symmem.bench uses), or constant, every element 0x3c3c (~1.2e-2;
  // what sessions before 31 timed). Under the power cap the GEMMs' clocks depend on their data, so
  // each gives different times. (Session 66: torch.matmul on randn operands in the Python harness
  // read 12-17% faster at 8192 x 4096 x 7168 than this benchmark's floor on uniform ones.)
  const char* data = std::getenv("SYMMEM_OVERLAP_DATA");
  const bool constant = data != nullptr && std::strcmp(data, "constant") == 0;
  const bool normal = data != nullptr && std::strcmp(data, "normal") == 0;
  require(data == nullptr || *data == 0 || constant || normal || std::strcmp(data, "random") == 0,
          "symmem-bench overlap: SYMMEM_OVERLAP_DATA must be random, normal or constant");
  int salt = 0;
  for (auto [p, bytes] : {std::pair<void*, size_t>{a, static_cast<size_t>(max_m) * max_k * 2},
                          {b, static_cast<size_t>(max_k) * max_n * 2},
                          {shard, static_cast<size_t>(max_m) * max_k * 2}}) {
    if (constant) SYMMEM_CUDA_CHECK(cudaMemset(p, 0x3c, bytes));
    else if (normal) fill_bf16_normal_kernel<<<1024, 256, 0, h.stream()>>>(static_cast<uint16_t*>(p), bytes / 2, (uint64_t(me) << 8) + ++salt);
    else fill_bf16_kernel<<<1024, 256, 0, h.stream()>>>(static_cast<uint16_t*>(p), bytes / 2, (uint64_t(me) << 8) + ++salt);
  }
  SYMMEM_CUDA_CHECK(cudaGetLastError());
  SYMMEM_CUDA_CHECK(cudaStreamSynchronize(h.stream()));
  ncclComm_t nc = h.nccl();
  cudaStream_t probe_side = nullptr;  // SYMMEM_OVERLAP_PROBE's copies
  cudaEvent_t probe_fork = nullptr, probe_join = nullptr;
  int probe_sms = 132;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&probe_side, cudaStreamNonBlocking));
  SYMMEM_CUDA_CHECK(cudaEventCreateWithFlags(&probe_fork, cudaEventDisableTiming));
  SYMMEM_CUDA_CHECK(cudaEventCreateWithFlags(&probe_join, cudaEventDisableTiming));
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&probe_sms, cudaDevAttrMultiProcessorCount, h.ctx().device()));
  if (me == 0) {
    std::printf("# symmem-bench overlap: TP=%d, %s; us (median of graph replays, max over ranks%s)\n", n, h.gpu_name().c_str(),
                h.idle_us() > 0 ? (", each after a " + std::to_string(h.idle_us()) + " us near-idle spin").c_str() : "");
    std::printf("%5s %6s %8s | %9s %9s %9s %9s %4s | %6s %6s | %s\n", "model", "op", "M", "gemm", "gemm+nccl", "overlap", "sequential",
                "auto", "vs_flr", "hidden", "overlap's form");
  }
  const char* only = std::getenv("SYMMEM_OVERLAP_MODELS");  // e.g. "8B": those models only
  const bool probe = std::getenv("SYMMEM_OVERLAP_PROBE") != nullptr;
  // SYMMEM_OVERLAP_PROBE_COPIES=r: the probe's pushes r times over (at TP = 2, r = 3 moves a rank's
  // bytes of TP = 4 over the same links: a 4-GPU floor measured on 2 GPUs).
  const char* reps_env = std::getenv("SYMMEM_OVERLAP_PROBE_COPIES");
  const int probe_copies = reps_env != nullptr && *reps_env != 0 ? std::atoi(reps_env) : 1;
  require(probe_copies >= 1, "symmem-bench overlap: SYMMEM_OVERLAP_PROBE_COPIES must be a positive integer");
  // pick_floor: see cand_gemms. A candidate is timed only where it runs on every rank (the ranks
  // then time the same programs), and the pick is the same on every rank (time_graphs' figures are
  // maxima over ranks). Returns the pick's description, and the runner-up's Gemm (null where there
  // is none) and description: the main batch times it beside the pick and the floor is the faster
  // of the two there (session 60: a pick's plan read up to 6% slower in the main batch than
  // another plan did in the next run).
  struct FloorPick {
    std::string plan, runner_up_plan;
    overlap::Gemm* runner_up = nullptr;
  };
  auto pick_floor = [&](int64_t m, int64_t nn, int64_t k, int ops) -> FloorPick {
    const std::vector<std::string> names = gemm.candidates(m, nn, k, k, nn, nn);
    const size_t count = static_cast<size_t>(-h.max_over_ranks(-static_cast<double>(names.size())));
    std::vector<std::function<void(cudaStream_t)>> programs;
    std::vector<size_t> which;
    for (size_t i = 0; i < count; ++i) {
      while (cand_gemms.size() <= i) cand_gemms.push_back(std::make_unique<overlap::Gemm>(size_t(32) << 20));
      overlap::Gemm* g = cand_gemms[i].get();
      bool runs = true;
      try {
        g->pick(i, m, nn, k, k, nn, nn);
        g->run(m, nn, k, a, k, b, nn, c, nn, h.stream());
        SYMMEM_CUDA_CHECK(cudaStreamSynchronize(h.stream()));
      } catch (const std::exception&) {
        (void)cudaGetLastError();
        runs = false;
      }
      if (h.max_over_ranks(runs ? 0.0 : 1.0) > 0) continue;
      programs.push_back([=](cudaStream_t s) { g->run(m, nn, k, a, k, b, nn, c, nn, s); });
      which.push_back(i);
    }
    if (programs.size() < 2) return {gemm.describe(m, nn, k, k, nn, nn)};
    const std::vector<double> t = h.time_graphs(programs, ops);
    const size_t best = static_cast<size_t>(std::min_element(t.begin(), t.end()) - t.begin());
    size_t second = best == 0 ? 1 : 0;
    for (size_t i = 0; i < t.size(); ++i)
      if (i != best && t[i] < t[second]) second = i;
    gemm.pick(which[best], m, nn, k, k, nn, nn);
    return {names[which[best]], names[which[second]], cand_gemms[which[second]].get()};
  };
  const char* only_m = std::getenv("SYMMEM_OVERLAP_M");  // e.g. "8192,16384": those M only
  auto m_wanted = [&](int64_t m) {
    if (only_m == nullptr || *only_m == 0) return true;
    for (const char* p = only_m; *p != 0;) {
      char* end = nullptr;
      const long long v = std::strtoll(p, &end, 10);
      if (end != p && v == m) return true;
      p = *end != 0 ? end + 1 : end;  // past the separator (or a character that is not a number)
    }
    return false;
  };
  // SYMMEM_OVERLAP_OPS=ag or rs: that operation only (e.g. one form timed alone beside a clock log).
  const std::string only_ops = std::getenv("SYMMEM_OVERLAP_OPS") != nullptr ? std::getenv("SYMMEM_OVERLAP_OPS") : "";
  require(only_ops.empty() || only_ops == "ag" || only_ops == "rs" || only_ops == "ag,rs" || only_ops == "rs,ag",
          "symmem-bench overlap: SYMMEM_OVERLAP_OPS must be ag, rs or ag,rs (got \"", only_ops, "\")");
  auto op_wanted = [&](int op) { return only_ops.empty() || only_ops.find(op == 0 ? "ag" : "rs") != std::string::npos; };
  for (const Model& md : models) {
    if (only != nullptr && std::strstr(only, md.name) == nullptr) continue;
    for (int64_t m : ms) {
      if (!m_wanted(m)) continue;
      for (int op = 0; op < 2; ++op) {  // 0: all-gather + GEMM, 1: GEMM + reduce-scatter
        if (!op_wanted(op)) continue;
        const int64_t k = op == 0 ? md.hidden : md.ffn / n, nn = op == 0 ? md.ffn / n : md.hidden;
        const int64_t rows = m / n;
        const int ops = m >= 8192 ? 3 : 5;
        // One uncaptured call of each GEMM first: it picks the fastest cuBLASLt candidate for the
        // shape (Gemm::run), as an engine's warm-up step would.
        gemm.run(m, nn, k, a, k, b, nn, c, nn, h.stream());
        const FloorPick pick = pick_floor(m, nn, k, ops);
        std::string floor_plan = pick.plan;
        auto floor_fn = [&](cudaStream_t s) { gemm.run(m, nn, k, a, k, b, nn, c, nn, s); };
        overlap::Gemm* const floor2 = pick.runner_up;
        auto nccl_fn = [&](cudaStream_t s) {
          if (op == 0) {
            ncclAllGather(shard, a, static_cast<size_t>(rows) * k, ncclBfloat16, nc, s);
            gemm.run(m, nn, k, a, k, b, nn, c, nn, s);
          } else {
            gemm.run(m, nn, k, a, k, b, nn, c, nn, s);
            ncclReduceScatter(c, shard, static_cast<size_t>(rows) * nn, ncclBfloat16, ncclSum, nc, s);
          }
        };
        auto symmem_fn = [&](overlap::Mode mode, overlap::TensorParallel* t = nullptr) {
          overlap::TensorParallel* which = t != nullptr ? t : &tp;
          return [&, mode, which](cudaStream_t s) {
            if (op == 0) which->all_gather_matmul(shard, m, k, b, nn, c, nullptr, s, mode);
            else which->matmul_reduce_scatter(a, m, k, b, nn, shard, ReduceOp::kSum, s, mode);
          };
        };
        symmem_fn(overlap::Mode::kOverlap)(h.stream());  // uncaptured: tunes the block GEMMs' shapes
        symmem_fn(overlap::Mode::kSequential)(h.stream());
        if (tp_alt) symmem_fn(overlap::Mode::kOverlap, tp_alt.get())(h.stream());
        for (auto* twin_set : {&tp_twins, &alt_twins})
          for (auto& twin : *twin_set) symmem_fn(overlap::Mode::kOverlap, twin.get())(h.stream());
        // The floor, symmem both ways and cuBLASLt + NCCL, their replays interleaved: one stretch
        // of time, one power state for all four (Harness::time_graphs).
        std::vector<std::function<void(cudaStream_t)>> programs = {floor_fn, symmem_fn(overlap::Mode::kOverlap),
                                                                   symmem_fn(overlap::Mode::kSequential)};
        if (nc != nullptr) programs.push_back(nccl_fn);
        const size_t alt_g = programs.size();  // (the alt column's program, with tp_alt)
        if (tp_alt) programs.push_back(symmem_fn(overlap::Mode::kOverlap, tp_alt.get()));
        // Each column's other instances (SYMMEM_OVERLAP_TWINS), then the floor's runner-up last.
        std::vector<size_t> ov_g = {1}, alt_gs = {alt_g};
        for (auto [twin_set, gs] : {std::pair{&tp_twins, &ov_g}, std::pair{&alt_twins, &alt_gs}})
          for (auto& twin : *twin_set) {
            gs->push_back(programs.size());
            programs.push_back(symmem_fn(overlap::Mode::kOverlap, twin.get()));
          }
        if (floor2 != nullptr) programs.push_back([&, floor2](cudaStream_t s) { floor2->run(m, nn, k, a, k, b, nn, c, nn, s); });
        const std::vector<double> t = h.time_graphs(programs, ops);
        const std::vector<ClockStats> clk = h.last_clocks();  // (each program's clock in this batch)
        const double floor2_us = floor2 != nullptr ? t.back() : -1;
        const double floor_us = floor2 != nullptr ? std::min(t[0], floor2_us) : t[0];
        if (floor2 != nullptr && floor2_us < t[0]) floor_plan = pick.runner_up_plan;
        // A column's figure: the median over its instances (the middle two's mean where even).
        // (Each instance's time goes to `list`, comma-separated, and its SM clock to `mhz`.)
        auto over_twins = [&](const std::vector<size_t>& gs, std::string& list, std::string& mhz) {
          std::vector<double> v;
          for (size_t g : gs) {
            v.push_back(t[g]);
            char one[32];
            std::snprintf(one, sizeof one, "%s%.1f", list.empty() ? "" : ",", t[g]);
            list += one;
            std::snprintf(one, sizeof one, "%s%.0f", mhz.empty() ? "" : ",", g < clk.size() ? clk[g].sm_mhz : -1.0);
            mhz += one;
          }
          std::sort(v.begin(), v.end());
          return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
        };
        std::string ov_list, alt_list, ov_mhz, alt_mhz;
        const double ov = over_twins(ov_g, ov_list, ov_mhz), sq = t[2], seq_nccl = nc != nullptr ? t[3] : -1;
        const double alt = tp_alt ? over_twins(alt_gs, alt_list, alt_mhz) : -1;
        const double comm_part = seq_nccl > floor_us ? seq_nccl - floor_us : 0;
        Row r{"overlap", "bfloat16", std::string(md.name) + (op == 0 ? "/ag_gemm" : "/gemm_rs"), static_cast<size_t>(m)};
        // symmem's figure is what auto runs (TensorParallel::choose), not the better of the two.
        const bool auto_overlap = tp.choose(op == 0 ? overlap::Op::kAllGatherMatmul : overlap::Op::kMatmulReduceScatter, m, k, nn) ==
                                  overlap::Mode::kOverlap;
        r.symmem_us = auto_overlap ? ov : sq;
        r.extra["auto_overlap"] = auto_overlap ? 1 : 0;
        // Which form each instance's overlap took (the alt column's knobs may change it), so that
        // an A/B can tell the rows a knob touched from those it did not.
        const overlap::Op the_op = op == 0 ? overlap::Op::kAllGatherMatmul : overlap::Op::kMatmulReduceScatter;
        r.text["form"] = overlap::form_name(tp.form(the_op, m, k, nn, overlap::Mode::kOverlap));
        if (tp_alt) r.text["alt_form"] = overlap::form_name(tp_alt->form(the_op, m, k, nn, overlap::Mode::kOverlap));
        r.nccl_us = seq_nccl;
        r.extra["gemm_alone_us"] = floor_us;
        r.text["floor_plan"] = floor_plan;
        if (floor2 != nullptr) {  // both plans' times in this batch: the pick's, the runner-up's
          r.extra["floor_pick_us"] = t[0];
          r.extra["floor_runner_up_us"] = floor2_us;
        }
        r.extra["overlap_us"] = ov;
        r.extra["sequential_us"] = sq;
        r.extra["k"] = static_cast<double>(k);
        r.extra["n"] = static_cast<double>(nn);
        r.extra["vs_floor"] = ov / floor_us;
        if (tp_alt) {
          r.extra["overlap_alt_us"] = alt;
          r.extra["alt_vs_floor"] = alt / floor_us;
        }
        if (twins > 1) {
          r.text["overlap_twins_us"] = ov_list;
          r.text["overlap_twins_mhz"] = ov_mhz;  // (-1 where the clocks are not sampled)
          if (tp_alt) r.text["alt_twins_us"] = alt_list;
          if (tp_alt) r.text["alt_twins_mhz"] = alt_mhz;
        }
        r.extra["hidden_fraction"] = comm_part > 0 ? std::max(0.0, 1.0 - (ov - floor_us) / comm_part) : -1;
        if (probe) {
          // SYMMEM_OVERLAP_PROBE=1: the floor of any overlap that moves its bytes by copy engine
          // while one GEMM runs. The full GEMM (cuBLASLt, and symmem's own on Hopper) with the
          // operation's pushes running beside it on a second stream, nothing waiting on them:
          // all-gather, this rank's A shard to every peer; reduce-scatter, a C block to every peer,
          // then the N blocks summed (the sum form's kernel). Each after a barrier, as the operation
          // (the own GEMM also without it).
          const size_t moved = static_cast<size_t>(rows) * (op == 0 ? k : nn) * 2;  // a peer's bytes
          SymmetricBuffer dst = h.comm().alloc(moved * n);
          const bool own_ok = overlap::hopper_gemm_supported(h.ctx().device());
          // The own GEMM in all_gather_matmul's order (this rank's shard, then the peers' as they
          // land) with no waits, where its shards allow (whole 256-row pairs).
          overlap::HopperRowShards shards;
          shards.rows = static_cast<int>(rows);
          shards.count = n;
          shards.first = me;
          const bool own_shards = op == 0 && rows % 256 == 0;
          // The same GEMM as all_gather_matmul feeds it: A from the symmetric heap (the operation's
          // gathered rows live there) and this rank's shard from its own tensor (shard).
          SymmetricBuffer heap_a = h.comm().alloc(static_cast<size_t>(m) * k * 2);
          SYMMEM_CUDA_CHECK(cudaMemcpy(heap_a.ptr(), a, static_cast<size_t>(m) * k * 2, cudaMemcpyDeviceToDevice));
          overlap::HopperRowShards shards_local = shards;
          shards_local.local = shard;
          shards_local.local_ld = k;
          // matmul_reduce_scatter's GEMMs: kind 7 is the cuBLASLt form's GEMM a block in its order; from
          // kind 8, the fused form's (fused_kinds).
          const bool rs_own_probe = own_ok && op == 1 && rows % 256 == 0;
          unsigned long long* probe_counts = nullptr;
          const int rs_g = overlap::detail::rs_groups(rows);  // the fused form's row groups
          SYMMEM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&probe_counts), sizeof(unsigned long long) * n * rs_g));
          SYMMEM_CUDA_CHECK(cudaMemset(probe_counts, 0, sizeof(unsigned long long) * n * rs_g));
          // The fused form's GEMM (matmul_reduce_scatter's where it runs) without its pushes, in its
          // order and row groups (fused_kinds, from kind 8): counting them (no sum), at the k-block
          // count_at of the next tile; or whose own block adds the partials from dst, whose signals are
          // set beforehand (nothing waits: what the adds cost), counting or not; or neither (what the
          // order and raster cost against the own GEMM alone; session 35, not yet run).
          // The t_ kinds: the same on hopper_gemm_t (Form::kFusedT) at the default count_at, summing
          // and counting, alone, with the operation's bytes copied beside it (to every peer, as
          // floor_with's copies), and that without the barrier: against the operation, what its
          // waits, signals and tail cost; counting without the sum, and neither (what the sum and
          // the counts cost).
          // (Session 59's t_summing_tail, t_summing with the stream's (N - 1) x groups writes of the
          // counts after the GEMM that the operation had then, put them at 2.7 us a write; HISTORY.)
          struct FusedKind { bool sum, count; int count_at; const char* key; bool t = false, copies = false, barrier = true; };
          const std::vector<FusedKind> fused_kinds = {{false, true, 3, "counting_at3"},  {false, true, 8, "counting_at8"},
                                                      {false, true, 16, "counting_at16"}, {true, true, 3, "summing_at3"},
                                                      {true, true, 8, "summing_at8"},     {true, false, 0, "summing_no_counts"},
                                                      {false, false, 0, "order_no_counts"},
                                                      {true, true, -1, "t_summing", true},
                                                      {true, true, -1, "t_summing_copies", true, true},
                                                      {true, true, -1, "t_summing_copies_no_barrier", true, true, false},
                                                      {false, true, -1, "t_counting", true},
                                                      {false, false, -1, "t_order_no_counts", true}};
          if (rs_own_probe) {
            std::vector<uint64_t> landed(n, uint64_t{1} << 40);
            SYMMEM_CUDA_CHECK(cudaMemcpy(dst.signal_pad(), landed.data(), sizeof(uint64_t) * n, cudaMemcpyHostToDevice));
          }
          auto fused_gemm = [&](bool sum, bool count, int count_at, bool t, cudaStream_t s) {
            overlap::HopperRowShards sh;
            sh.rows = static_cast<int>(rows);
            sh.count = n;
            sh.first = (me + n - 1) % n;
            sh.groups = rs_g;
            if (count) sh.done = probe_counts;
            if (sum) {
              sh.sum_shard = me;
              sh.partials = dst.ptr();
              sh.out = shard;
              sh.handle = dst.handle();
            }
            overlap::HopperGemmOptions opt;
            opt.group_m = overlap::detail::kReduceGroup;
            if (count_at >= 0) opt.count_at = count_at;
            if (t) {
              opt.t_tall = overlap::hopper_t_tall(m, nn, opt, &sh);
              overlap::hopper_gemm_t(m, nn, k, a, k, b, nn, c, nn, opt, s, &sh);
            } else {
              overlap::hopper_gemm(m, nn, k, a, k, b, nn, c, nn, opt, s, &sh);
            }
            if (count) SYMMEM_CUDA_CHECK(cudaMemsetAsync(probe_counts, 0, sizeof(unsigned long long) * n * rs_g, s));
          };
          // gemm_kind 0 none, 1 cuBLASLt, 2 own, 3 own with A in the heap, 4 the same with the local
          // shard apart, 7 and from 8 above; barrier false: the ranks not held together (what the
          // barrier's coupling of the ranks costs is the difference)
          auto floor_with = [&](int gemm_kind, bool copies, bool sum, bool barrier = true) {
            return [&, gemm_kind, copies, sum, barrier](cudaStream_t s) {
              if (barrier) stream::barrier(dst, s);
              if (copies) {
                SYMMEM_CUDA_CHECK(cudaEventRecord(probe_fork, s));
                SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(probe_side, probe_fork, 0));
                for (int rep = 0; rep < probe_copies; ++rep)
                  for (int j = 1; j < n; ++j)
                    stream::put(dst, (me + j) % n, static_cast<size_t>(me) * moved, op == 0 ? shard : c, moved, probe_side, Engine::kCopyEngine);
                SYMMEM_CUDA_CHECK(cudaEventRecord(probe_join, probe_side));
              }
              if (gemm_kind == 1) gemm.run(m, nn, k, a, k, b, nn, c, nn, s);
              if (gemm_kind == 2) overlap::hopper_gemm(m, nn, k, a, k, b, nn, c, nn, overlap::HopperGemmOptions{}, s, own_shards ? &shards : nullptr);
              if (gemm_kind == 3) overlap::hopper_gemm(m, nn, k, heap_a.ptr(), k, b, nn, c, nn, overlap::HopperGemmOptions{}, s, own_shards ? &shards : nullptr);
              if (gemm_kind == 4) overlap::hopper_gemm(m, nn, k, heap_a.ptr(), k, b, nn, c, nn, overlap::HopperGemmOptions{}, s, own_shards ? &shards_local : nullptr);
              if (gemm_kind >= 8) {
                const FusedKind& f = fused_kinds[gemm_kind - 8];
                fused_gemm(f.sum, f.count, f.count_at, f.t, s);
              }
              if (gemm_kind == 7)
                for (int j = 1; j <= n; ++j) {
                  const int p = (me + j) % n;
                  gemm.run(rows, nn, k, static_cast<const char*>(a) + static_cast<size_t>(p) * rows * k * 2, k, b, nn,
                           static_cast<char*>(c) + static_cast<size_t>(p) * rows * nn * 2, nn, s);
                }
              if (copies) SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(s, probe_join, 0));
              if (sum) overlap::launch_sum_slots(dst.ptr(), static_cast<size_t>(rows) * nn, n, shard, 1.0f, probe_sms, s);
            };
          };
          const bool rs = op == 1;
          // Every variant's replays interleaved with the others' and the floor's (time_graphs).
          // (Timed one after the other in session 31, the own GEMM came out 8-23% slower than
          // cuBLASLt; interleaved on one GPU, the two are level: session 32.)
          std::vector<std::function<void(cudaStream_t)>> variants = {floor_fn, floor_with(0, true, false), floor_with(1, false, false),
                                                                     floor_with(1, true, rs)};
          if (rs) variants.push_back(floor_with(0, false, true));
          if (own_ok) {
            variants.push_back(floor_with(2, false, false));
            variants.push_back(floor_with(2, true, rs));
            variants.push_back(floor_with(2, false, false, false));
            variants.push_back(floor_with(2, true, false, false));
            variants.push_back(floor_with(3, false, false));
            if (own_shards) variants.push_back(floor_with(4, false, false));
          }
          const size_t rs_first = variants.size();
          if (rs_own_probe) {
            variants.push_back(floor_with(7, false, false));
            for (size_t f = 0; f < fused_kinds.size(); ++f)
              variants.push_back(floor_with(8 + static_cast<int>(f), fused_kinds[f].copies, false, fused_kinds[f].barrier));
          }
          const std::vector<double> pt = h.time_graphs(variants, ops);
          size_t vi = 1;
          const double copies = pt[vi++], blt = pt[vi++], blt_c = pt[vi++], sum_alone = rs ? pt[vi++] : -1;
          const double own = own_ok ? pt[vi++] : -1, own_c = own_ok ? pt[vi++] : -1, own_free = own_ok ? pt[vi++] : -1,
                       own_free_c = own_ok ? pt[vi++] : -1, own_heap = own_ok ? pt[vi++] : -1,
                       own_local = own_ok && own_shards ? pt[vi++] : -1;
          r.extra["probe_gemm_alone_us"] = pt[0];
          if (variants.size() > rs_first) {
            r.extra["probe_rs_cublas_block_gemms_us"] = pt[rs_first];
            std::string fused_text;
            for (size_t f = 0; f < fused_kinds.size(); ++f) {
              r.extra[std::string("probe_fused_gemm_") + fused_kinds[f].key + "_us"] = pt[rs_first + 1 + f];
              char one[96];
              std::snprintf(one, sizeof one, " %s %.1f", fused_kinds[f].key, pt[rs_first + 1 + f]);
              fused_text += one;
            }
            if (me == 0)
              std::printf("# probe %s mm+rs M %lld: cuBLASLt's GEMM a block %.1f; the GEMM alone %.1f; the own GEMM alone %.1f; "
                          "fused form's GEMM (%d row groups):%s [us, interleaved]\n",
                          md.name, static_cast<long long>(m), pt[rs_first], pt[0], own, rs_g, fused_text.c_str());
          }
          SYMMEM_CUDA_CHECK(cudaFree(probe_counts));
          r.extra["probe_copy_reps"] = probe_copies;
          r.extra["probe_copies_alone_us"] = copies;
          r.extra["probe_cublas_barrier_us"] = blt;
          r.extra["probe_cublas_with_copies_us"] = blt_c;
          r.extra["probe_own_barrier_us"] = own;
          r.extra["probe_own_with_copies_us"] = own_c;
          if (rs) r.extra["probe_sum_alone_us"] = sum_alone;
          r.extra["probe_own_no_barrier_us"] = own_free;
          r.extra["probe_own_heap_a_us"] = own_heap;
          r.extra["probe_own_heap_a_local_shard_us"] = own_local;
          if (me == 0) std::printf("# probe %s M %lld: own with A in the heap %.1f, and the local shard apart %.1f\n", md.name, static_cast<long long>(m), own_heap, own_local);
          r.extra["probe_own_no_barrier_with_copies_us"] = own_free_c;
          h.comm().free(dst);
          h.comm().free(heap_a);
          if (me == 0)
            std::printf("# probe %s %s M %lld: copies alone %.1f%s; cuBLASLt %.1f, with copies%s %.1f (%.3fx); own %.1f, with copies%s %.1f (%.3fx) [us, each after a barrier]; own without the barrier %.1f, with copies %.1f\n",
                        md.name, rs ? "mm+rs" : "ag+mm", static_cast<long long>(m), copies,
                        rs ? (", sum alone " + std::to_string(sum_alone)).c_str() : "", blt, rs ? " + sum" : "", blt_c, blt_c / floor_us,
                        own, rs ? " + sum" : "", own_c, own_c / floor_us, own_free, own_free_c);
        }
        if (probe && op == 1) {
          // SYMMEM_OVERLAP_PROBE=1: the GEMMs of matmul_reduce_scatter's blocks alone (a rank's
          // block, its halves as at 2 ranks, a half adding C in the epilogue), with their plans.
          const int64_t half = rows / 2;
          auto gemm_us = [&](int64_t mm, bool acc) {
            auto one = [&](cudaStream_t s) {
              if (acc) gemm.run_acc(mm, nn, k, a, k, b, nn, c, 1.0f, 1.0f, c, nn, s);
              else gemm.run(mm, nn, k, a, k, b, nn, c, nn, s);
            };
            one(h.stream());  // uncaptured: tunes the shape
            return h.time_graph(one, ops);
          };
          const double t_rows = gemm_us(rows, false), t_half = gemm_us(half, false), t_acc = gemm_us(half, true);
          // The ring's GEMMs back to back (N steps of rs_chunks parts, every step after the first
          // adding C), without communication and with the ring's pushes (every part but the last
          // step's, by copy engine to rank me - 1 once its GEMM is done, nothing waiting for them),
          // timed interleaved with the GEMM alone and the operation: what the chain, its pushes and
          // its waits each cost.
          const char* forced = std::getenv("SYMMEM_OVERLAP_RS_CHUNKS");
          const int parts = overlap::detail::rs_chunks(rows, k, forced != nullptr ? std::atoi(forced) : 0);
          const int64_t part = rows / parts;
          const size_t part_bytes = static_cast<size_t>(part) * nn * 2;
          SymmetricBuffer landing = h.comm().alloc(part_bytes * parts);
          auto chain = [&](bool push) {
            return [&, push](cudaStream_t s) {
              for (int t = 0; t < n; ++t)
                for (int p = 0; p < parts; ++p) {
                  char* cp = static_cast<char*>(c) + p * part_bytes;
                  if (t == 0) gemm.run(part, nn, k, a, k, b, nn, cp, nn, s);
                  else gemm.run_acc(part, nn, k, a, k, b, nn, cp, 1.0f, 1.0f, cp, nn, s);
                  if (!push || t == n - 1) continue;
                  SYMMEM_CUDA_CHECK(cudaEventRecord(probe_fork, s));
                  SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(probe_side, probe_fork, 0));
                  stream::put(landing, (me + n - 1) % n, p * part_bytes, cp, part_bytes, probe_side, Engine::kCopyEngine);
                }
              if (!push) return;
              SYMMEM_CUDA_CHECK(cudaEventRecord(probe_join, probe_side));
              SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(s, probe_join, 0));
            };
          };
          chain(false)(h.stream());
          const std::vector<double> ct = h.time_graphs({floor_fn, chain(false), chain(true), symmem_fn(overlap::Mode::kOverlap)}, ops);
          const double t_chain = ct[1];
          h.comm().free(landing);
          r.extra["probe_ring_gemm_alone_us"] = ct[0];
          r.extra["probe_ring_chain_us"] = ct[1];
          r.extra["probe_ring_chain_pushes_us"] = ct[2];
          r.extra["probe_ring_operation_us"] = ct[3];
          if (me == 0)
            std::printf("# probe %s mm+rs M %lld: interleaved, the GEMM alone %.1f; the ring's chain (%d x %d parts) %.1f (%.3fx), with its "
                        "pushes %.1f (%.3fx); the operation %.1f (%.3fx) [us]\n",
                        md.name, static_cast<long long>(m), ct[0], n, parts, ct[1], ct[1] / ct[0], ct[2], ct[2] / ct[0], ct[3], ct[3] / ct[0]);
          // A reduce-scatter alone and right after the GEMM that wrote its input (the sequential
          // path's pair), by algorithm: symmem's direct on a symmetric input, NCCL through
          // symmem and on its own on ordinary memory. After the GEMM it costs the pair's time less
          // the GEMM alone.
          SymmetricBuffer sym = h.comm().alloc(static_cast<size_t>(m) * nn * 2);
          SYMMEM_CUDA_CHECK(cudaMemset(sym.ptr(), 0x3c, static_cast<size_t>(m) * nn * 2));
          // (the GEMM alone into the symmetric buffer too: the pairs below write there)
          const double gemm_sym = h.time_graph([&](cudaStream_t s) { gemm.run(m, nn, k, a, k, b, nn, sym.ptr(), nn, s); }, ops);
          r.extra["gemm_into_symmetric_us"] = gemm_sym;
          auto us = [](double v) {  // (one decimal)
            char b[32];
            std::snprintf(b, sizeof(b), "%.1f", v);
            return std::string(b);
          };
          std::string after = " [GEMM into it " + us(gemm_sym) + "]";
          for (Algo al : {Algo::kDirect, Algo::kNccl}) {
            auto rs = [&](cudaStream_t s) { h.comm().reduce_scatter(sym.ptr(), shard, static_cast<size_t>(rows) * nn, DataType::kBFloat16, ReduceOp::kSum, s, al); };
            const double alone = h.time_graph(rs, ops);
            const double pair = h.time_graph([&](cudaStream_t s) {
              gemm.run(m, nn, k, a, k, b, nn, sym.ptr(), nn, s);
              rs(s);
            }, ops);
            after += std::string(" ") + algo_name(al) + " " + us(alone) + " / " + us(pair - floor_us);
            r.extra[std::string("rs_alone_") + algo_name(al)] = alone;
            r.extra[std::string("rs_after_gemm_") + algo_name(al)] = pair - floor_us;
          }
          if (nc != nullptr) {
            auto rs = [&](cudaStream_t s) { ncclReduceScatter(c, shard, static_cast<size_t>(rows) * nn, ncclBfloat16, ncclSum, nc, s); };
            const double alone = h.time_graph(rs, ops);
            after += " nccl-plain " + us(alone) + " / " + us(seq_nccl - floor_us);
            r.extra["rs_alone_nccl_plain"] = alone;
            r.extra["rs_after_gemm_nccl_plain"] = seq_nccl - floor_us;
          }
          h.comm().free(sym);
          if (me == 0) std::printf("# probe %s M %lld: reduce-scatter alone / after the GEMM (us):%s\n", md.name, static_cast<long long>(m), after.c_str());
          if (me == 0)
            std::printf("# probe %s M %lld: block %lld rows %.1f us [%s]; half %lld rows %.1f us [%s], with C added %.1f us; "
                        "ring chain %d x %d parts of %lld rows %.1f us\n", md.name,
                        static_cast<long long>(m), static_cast<long long>(rows), t_rows, gemm.describe(rows, nn, k, k, nn, nn).c_str(),
                        static_cast<long long>(half), t_half, gemm.describe(half, nn, k, k, nn, nn).c_str(), t_acc, n, parts,
                        static_cast<long long>(part), t_chain);
        }
        // The clock each program ran at (the GPUs sit at their power limit through these GEMMs:
        // a form that moves more bytes runs at a lower clock; Harness::set_clock_sampling).
        std::string clock_text;
        if (h.power_limit_w() > 0) r.extra["power_limit_w"] = h.power_limit_w();  // (rank 0's GPU)
        {
          std::vector<std::pair<const char*, size_t>> named = {{"floor", 0}, {"overlap", 1}, {"sequential", 2}};
          if (nc != nullptr) named.push_back({"nccl", 3});
          if (tp_alt) named.push_back({"alt", alt_g});
          for (const auto& [name, g] : named) {
            if (g >= clk.size() || clk[g].sm_mhz < 0) continue;
            r.extra[std::string("sm_mhz_") + name] = clk[g].sm_mhz;
            r.extra[std::string("power_w_") + name] = clk[g].power_w;
            r.extra[std::string("power_capped_") + name] = clk[g].capped_share;
            char one[96];
            std::snprintf(one, sizeof one, "%s %s %.0f MHz %.0f W%s", clock_text.empty() ? "" : ",", name, clk[g].sm_mhz, clk[g].power_w,
                          clk[g].capped_share >= 0.5 ? " capped" : "");
            clock_text += one;
          }
        }
        h.add(r);
        char alt_text[160] = "";
        if (tp_alt)
          std::snprintf(alt_text, sizeof alt_text, " | alt %9.1f %6.3f%s%s", alt, alt / floor_us,
                        r.text["alt_form"] != r.text["form"] ? " as " : "", r.text["alt_form"] != r.text["form"] ? r.text["alt_form"].c_str() : "");
        if (me == 0)
          std::printf("%5s %6s %8lld | %9.1f %9.1f %9.1f %9.1f %4s | %6.3f %6.2f | %s%s\n", md.name, op == 0 ? "ag+mm" : "mm+rs",
                      static_cast<long long>(m), floor_us, seq_nccl, ov, sq, auto_overlap ? "ov" : "seq", r.extra["vs_floor"],
                      r.extra["hidden_fraction"], r.text["form"].c_str(), alt_text);
        if (me == 0 && !clock_text.empty())
          std::printf("#   %s %s %lld clocks (lowest over ranks, power the highest):%s\n", md.name, op == 0 ? "ag+mm" : "mm+rs",
                      static_cast<long long>(m), clock_text.c_str());
      }
    }
  }
  for (void* p : {a, b, c, shard}) cudaFree(p);
  cudaEventDestroy(probe_fork);
  cudaEventDestroy(probe_join);
  cudaStreamDestroy(probe_side);
}

}  // namespace symmem::bench
