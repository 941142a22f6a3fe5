#pragma once
// What every benchmark shares: options (nccl-tests flags), the rank's context, heap and NCCL
// communicator, graph-replay timing (median over replays, maximum over ranks) and result rows.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clocks.hpp"
#include "fastest.hpp"
#include "round_order.hpp"
#include "symmem/symmem.hpp"

namespace symmem::bench {

struct Options {
  size_t min_bytes = 8;                 // -b
  size_t max_bytes = size_t(1) << 30;   // -e
  size_t factor = 2;                    // -f
  int iters = 20;                       // -n: ops per timed graph
  int warmup = 3;                       // -w: untimed replays
  int replays = 15;                     // timed replays (median)
  std::string dtype = "bfloat16";       // -d
  std::string redop = "sum";            // -o
  std::string json;                     // --json FILE
  std::string svg;                      // --svg FILE
  std::string commit = SYMMEM_GIT_COMMIT;
  std::string device_kind;              // --kind: the lent machine's kind, recorded in the JSON (else bench/device_kind.hpp's)
  bool check = true;                    // -c 0 turns the #wrong check off
};

/// One measured row; fields a given op lacks stay negative.
struct Row {
  std::string op, dtype, algo;
  size_t bytes = 0;
  double symmem_us = -1, nccl_us = -1, nccl_symm_us = -1;
  double symmem_gbps = -1, nccl_gbps = -1;  // bus bandwidth (p2p: bytes / time each way)
  long wrong = 0;
  std::map<std::string, double> extra;
  std::map<std::string, std::string> text;  // named words (e.g. the form an overlap call took)
};

class Harness {
 public:
  explicit Harness(const Options& opt);
  ~Harness();
  const Options& opt() const { return opt_; }
  // The near-idle spin before each timed replay, in us (SYMMEM_BENCH_IDLE_US; 0: none).
  unsigned long long idle_us() const { return idle_ns_ / 1000; }
  void set_opt(const Options& o) { opt_ = o; }
  Context& ctx() { return *ctx_; }
  Communicator& comm() { return *comm_; }
  Heap& heap() { return comm_->heap(); }
  const Team& team() const { return ctx_->world(); }
  int rank() const { return ctx_->rank(); }
  int size() const { return ctx_->size(); }
  ncclComm_t nccl() const { return static_cast<ncclComm_t>(comm_->nccl_comm()); }
  cudaStream_t stream() const { return stream_; }
  std::string gpu_name() const;

  /// Captures `ops` calls of `enqueue` in a graph, replays it warmup times, then times opt.replays
  /// replays with events; returns the median time of one op in us, maximised over ranks.
  double time_graph(const std::function<void(cudaStream_t)>& enqueue, int ops);
  /// The same for several programs at once, their replays interleaved (warm-up and timed rounds
  /// each replay every graph in turn, each timed round one program later than the one before, so
  /// that no program always follows the same one): each figure then comes from the same stretch
  /// of time, the same clocks and temperature. Under a power cap that matters: a GEMM timed 20 ms after an idle
  /// spell runs faster than one timed after a second of GEMMs, so figures timed one after the
  /// other are not comparable (session 32). Returns one median a program, in us per op.
  std::vector<double> time_graphs(const std::vector<std::function<void(cudaStream_t)>>& enqueues, int ops);
  /// With clock sampling on (set_clock_sampling; SYMMEM_BENCH_CLOCKS=0 keeps it off), time_graphs
  /// also samples the GPU's SM clock and power beside its timed rounds (ClockLog) and keeps, for
  /// each program, the samples taken during its replays: last_clocks()[g], the lowest median clock
  /// over ranks, the highest median power and power-capped share (all -1 where a rank has none).
  void set_clock_sampling(bool on);
  const std::vector<ClockStats>& last_clocks() const { return last_clocks_; }
  /// This rank's GPU's enforced power limit in W, where clocks are sampled (else -1).
  double power_limit_w() const { return clocks_ ? clocks_->power_limit_w() : -1; }
  /// Times one enqueue (itself a loop, e.g. a ping-pong kernel) the same way; returns us per call.
  double time_once(const std::function<void(cudaStream_t)>& enqueue) { return time_graph(enqueue, 1); }
  /// Lines the ranks up on the GPU before a timed launch: a spin of ~50 us keeps the GPU busy while
  /// the host queues what follows, then a device barrier over every rank.
  void line_up();
  /// Maximum of a value over ranks; sum of a count over ranks.
  double max_over_ranks(double v);
  /// The same for each element (one exchange for all).
  std::vector<double> max_over_ranks(const std::vector<double>& v);
  long sum_over_ranks(long v);

  void add(const Row& r) { rows_.push_back(r); }
  const std::vector<Row>& rows() const { return rows_; }
  /// Sizes from -b to -e by -f.
  std::vector<size_t> sizes() const;

 private:
  Options opt_;
  std::shared_ptr<Context> ctx_;
  std::unique_ptr<Communicator> comm_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::vector<Row> rows_;
  SymmetricBuffer sync_;  // for the device barrier before each timed replay
  bool sampling_ = false;
  // SYMMEM_BENCH_IDLE_US: a spin of one thread this long before each timed replay of time_graphs
  // (the GPU nearly idle: under the power cap, a lower duty cycle lets the next replay's clock
  // rise, as python -m symmem.bench's half-millisecond sleep and host barriers between replays do).
  // The clock records' windows then take in the spin too.
  unsigned long long idle_ns_ = 0;
  std::unique_ptr<ClockLog> clocks_;  // (null where sampling is off or NVML is missing)
  std::vector<ClockStats> last_clocks_;
};

/// Writes the rows as JSON (device, gpus, commit, NCCL version, date) and an SVG plot.
void write_json(const Harness& h, const std::string& suite, const std::string& path);
/// Writes the plot; false where there is nothing to plot (no timed rows). Both raise where the file cannot be written.
bool write_svg(const std::vector<Row>& rows, const std::string& title, const std::string& path);

/// Benchmarks: each runs collectively on every rank and adds rows.
void run_p2p(Harness& h);
/// One collective at every size: symmem (each algorithm that fits, and the one the table picks)
/// beside NCCL on plain buffers and on NCCL symmetric windows. With `tune`, the fastest algorithm
/// per size goes into `table`.
void run_collective(Harness& h, CollOp op, TuningTable* table = nullptr);
/// Expert-parallel dispatch and combine (moe::ExpertParallel) on the MoE issue's shapes, uniform
/// and skewed routing, beside a worst-case-sized NCCL all-to-all of the same rows.
void run_moe(Harness& h);
/// All-gather + GEMM and GEMM + reduce-scatter (overlap::TensorParallel) on Llama-3 8B/70B MLP
/// shapes, beside the GEMM alone and cuBLASLt + NCCL one after the other.
void run_overlap(Harness& h);

}  // namespace symmem::bench
