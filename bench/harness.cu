#include "harness.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "spin.cuh"
#include "symmem/error.hpp"

namespace symmem::bench {

Harness::Harness(const Options& opt) : opt_(opt) {
  ctx_ = Context::init();
  comm_ = std::make_unique<Communicator>(ctx_);
  require(comm_->has_nccl(), "symmem-bench needs one GPU per rank (NCCL cannot share a GPU between ranks)");
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  SYMMEM_CUDA_CHECK(cudaEventCreate(&start_));
  SYMMEM_CUDA_CHECK(cudaEventCreate(&stop_));
  sync_ = heap().alloc(64);
  idle_ns_ = idle_ns_from_env();
}

Harness::~Harness() {
  if (sync_.valid()) heap().free(sync_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::string Harness::gpu_name() const {
  cudaDeviceProp p;
  SYMMEM_CUDA_CHECK(cudaGetDeviceProperties(&p, ctx_->device()));
  return p.name;
}

double Harness::time_graph(const std::function<void(cudaStream_t)>& enqueue, int ops) { return time_graphs({enqueue}, ops)[0]; }

std::vector<double> Harness::time_graphs(const std::vector<std::function<void(cudaStream_t)>>& enqueues, int ops) {
  std::vector<cudaGraphExec_t> execs;
  auto release = [&] {
    for (cudaGraphExec_t e : execs) (void)cudaGraphExecDestroy(e);
  };
  try {
    for (const auto& enqueue : enqueues) {
      cudaGraph_t graph = nullptr;
      SYMMEM_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
      try {
        for (int i = 0; i < ops; ++i) enqueue(stream_);
      } catch (...) {  // (the capture ends here, so that what the caller does next may synchronise)
        cudaGraph_t partial = nullptr;
        if (cudaStreamEndCapture(stream_, &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
        (void)cudaGetLastError();
        throw;
      }
      SYMMEM_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
      cudaGraphExec_t exec = nullptr;
      const cudaError_t rc = cudaGraphInstantiate(&exec, graph, 0);
      (void)cudaGraphDestroy(graph);
      SYMMEM_CUDA_CHECK(rc);
      execs.push_back(exec);
    }
    for (int w = 0; w < opt_.warmup; ++w)
      for (cudaGraphExec_t e : execs) SYMMEM_CUDA_CHECK(cudaGraphLaunch(e, stream_));
    ctx_->synchronize(stream_, "benchmark warm-up");
    std::vector<std::vector<float>> ms(execs.size());
    std::vector<std::vector<std::pair<double, double>>> windows(execs.size());  // host time of each replay (ClockLog)
    // Each round runs the programs in an order of its own (round_order: a shuffle from the round's
    // number alone, the same on every rank), so that every program follows every other about
    // equally often. (Until session 59 each round started one program later, so program g always
    // ran right after g - 1: symmem-bench overlap's second TensorParallel read 0-64 us slower than
    // an identical first one at 70B mm+rs (4 x H100, session 37) and 1.5-2% faster (2 x H200,
    // sessions 58-59).)
    // SYMMEM_BENCH_ORDER=rotate: the old order (round r: r, r + 1, ... mod P), to compare the two.
    const char* order_env = std::getenv("SYMMEM_BENCH_ORDER");
    const bool rotate = order_env != nullptr && std::strcmp(order_env, "rotate") == 0;
    require(order_env == nullptr || *order_env == 0 || rotate || std::strcmp(order_env, "shuffle") == 0,
            "symmem-bench: SYMMEM_BENCH_ORDER must be shuffle (the default) or rotate");
    if (clocks_) clocks_->start();
    for (int r = 0; r < opt_.replays; ++r)
      for (size_t g : rotate ? rotated_order(execs.size(), r) : round_order(execs.size(), r)) {
        const double host_t0 = clocks_ ? ClockLog::now() : 0;
        if (idle_ns_ > 0) spin_kernel<<<1, 1, 0, stream_>>>(idle_ns_);
        line_up();  // on the GPU, not the host, right before the start event
        SYMMEM_CUDA_CHECK(cudaEventRecord(start_, stream_));
        SYMMEM_CUDA_CHECK(cudaGraphLaunch(execs[g], stream_));
        SYMMEM_CUDA_CHECK(cudaEventRecord(stop_, stream_));
        ctx_->synchronize(stream_, "benchmark replay");
        if (clocks_) windows[g].emplace_back(host_t0, ClockLog::now());
        float t = 0;
        SYMMEM_CUDA_CHECK(cudaEventElapsedTime(&t, start_, stop_));
        ms[g].push_back(t);
      }
    const std::vector<ClockSample> samples = clocks_ ? clocks_->stop() : std::vector<ClockSample>{};
    release();
    execs.clear();
    std::vector<double> out;
    for (auto& v : ms) {
      std::sort(v.begin(), v.end());
      out.push_back(max_over_ranks(1000.0 * v[v.size() / 2] / ops));
    }
    // Each program's clocks, agreed over ranks in one exchange (every rank takes this branch or
    // none: set_clock_sampling is called alike on every rank, and a rank whose log is off sends
    // "none").
    last_clocks_.assign(ms.size(), ClockStats{});
    if (sampling_) {
      std::vector<double> packed;  // a program's: none (1 / 0), -clock, power, capped share
      std::vector<ClockStats> mine(ms.size());
      for (size_t g = 0; g < ms.size(); ++g) {
        mine[g] = clock_stats(samples, windows[g]);
        packed.insert(packed.end(), {mine[g].samples > 0 ? 0.0 : 1.0, -mine[g].sm_mhz, mine[g].power_w, mine[g].capped_share});
      }
      const std::vector<double> m = max_over_ranks(packed);
      for (size_t g = 0; g < ms.size(); ++g) {
        if (m[4 * g] > 0) continue;  // (some rank has no samples of it)
        ClockStats& c = last_clocks_[g];
        c.sm_mhz = -m[4 * g + 1];
        c.power_w = m[4 * g + 2];
        c.capped_share = m[4 * g + 3];
        c.samples = mine[g].samples;  // (this rank's)
      }
    }
    return out;
  } catch (...) {
    if (clocks_) (void)clocks_->stop();
    release();
    throw;
  }
}

void Harness::set_clock_sampling(bool on) {
  const char* env = std::getenv("SYMMEM_BENCH_CLOCKS");
  // Collective: every rank samples or none (time_graphs then exchanges the clocks on all or none).
  sampling_ = max_over_ranks(on && !(env != nullptr && std::strcmp(env, "0") == 0) ? 0.0 : 1.0) == 0;
  if (sampling_ && !clocks_) {
    clocks_ = std::make_unique<ClockLog>(ctx_->device(), 2000);  // (a sample each 2 ms: a few a 70B replay; each query is a call into the driver)
    if (!clocks_->enabled()) {
      if (rank() == 0) std::fprintf(stderr, "symmem-bench: GPU clocks not sampled (%s)\n", clocks_->why_not().c_str());
      clocks_.reset();
    }
  }
  if (!sampling_) clocks_.reset();
}

void Harness::line_up() {
  spin_kernel<<<1, 1, 0, stream_>>>(50000);
  stream::barrier(sync_, stream_);
}

double Harness::max_over_ranks(double v) { return max_over_ranks(std::vector<double>{v})[0]; }

std::vector<double> Harness::max_over_ranks(const std::vector<double>& v) {
  auto all = team().all_gather(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double)), "benchmark max");
  std::vector<double> m = v;
  for (auto& s : all) {
    require(s.size() == v.size() * sizeof(double), "symmem-bench: ranks disagree on how many values to compare (", s.size() / sizeof(double),
            " against ", v.size(), ")");
    for (size_t i = 0; i < v.size(); ++i) {
      double x;
      std::memcpy(&x, s.data() + i * sizeof(double), sizeof(x));
      m[i] = std::max(m[i], x);
    }
  }
  return m;
}

long Harness::sum_over_ranks(long v) {
  auto all = team().all_gather(std::to_string(v), "benchmark sum");
  long s = 0;
  for (auto& x : all) s += std::stol(x);
  return s;
}

std::vector<size_t> Harness::sizes() const {
  std::vector<size_t> out;
  for (size_t b = opt_.min_bytes; b <= opt_.max_bytes; b = opt_.factor > 1 ? b * opt_.factor : b + 1) {
    out.push_back(b);
    if (opt_.factor <= 1) break;
  }
  return out;
}

}  // namespace symmem::bench
