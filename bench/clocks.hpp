#pragma once
// The GPU's SM clock, power draw and power-cap state, sampled beside symmem-bench's timed rounds.
// On the machines symmem is measured on, the large GEMMs of the overlap shapes run at the GPU's
// power limit (2 x H200, session 64: 685-700 W of 700, SM clock 1170-1440 MHz against 1980 idle),
// so a figure means little without the clock it ran at: a form that reads more bytes than another
// of the same flops loses clock to it, and machines of the same kind differ. ClockLog samples the
// GPU every few milliseconds on a thread of its own (host only: it never touches
// the GPU's work or settings), and clock_stats gives each timed program the samples that fall in
// its replays.
//
// NVML is loaded at run time (libnvidia-ml.so.1, read-only queries); where it is missing or a
// query fails the log is off (why_not() says why) and every statistic is -1.
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace symmem::bench {

/// One sample: host time (seconds, ClockLog::now), SM clock (MHz), power draw (W), and whether the
/// driver reported the clock held down by the power limit (software power cap or power brake;
/// capped_known false where the driver does not say).
struct ClockSample {
  double t = 0, sm_mhz = 0, power_w = 0;
  bool power_capped = false, capped_known = true;
};

/// Over the samples inside any of `windows` ([begin, end] host times): the median SM clock and
/// power, and the share of those samples power-capped (-1 where a sample does not know); every
/// field -1 (samples 0) where none fall inside.
struct ClockStats {
  double sm_mhz = -1, power_w = -1, capped_share = -1;
  int samples = 0;
};
ClockStats clock_stats(const std::vector<ClockSample>& samples, const std::vector<std::pair<double, double>>& windows);

class ClockLog {
 public:
  /// The GPU of CUDA device `cuda_device` (found in NVML by its PCI bus id). `period_us`: the time
  /// between samples.
  explicit ClockLog(int cuda_device, int period_us = 1000);
  ~ClockLog();
  ClockLog(const ClockLog&) = delete;
  ClockLog& operator=(const ClockLog&) = delete;
  bool enabled() const { return device_ != nullptr; }
  const std::string& why_not() const { return why_not_; }
  /// The enforced power limit in W (-1 where unknown).
  double power_limit_w() const { return limit_w_; }
  /// Starts sampling (a no-op where the log is off or already running).
  void start();
  /// Stops sampling and returns the samples since start().
  std::vector<ClockSample> stop();
  /// The host clock the samples and windows use, in seconds.
  static double now();

 private:
  bool sample(ClockSample& s);
  void off(const std::string& why);
  void* lib_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
  int period_us_;
  double limit_w_ = -1;
  std::string why_not_;
  // NVML's entry points (signatures as nvml.h declares them; types spelled out here).
  int (*clock_info_)(void*, int, unsigned*) = nullptr;
  int (*power_usage_)(void*, unsigned*) = nullptr;
  int (*reasons_)(void*, unsigned long long*) = nullptr;
  int (*shutdown_)() = nullptr;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::mutex mu_;
  std::vector<ClockSample> samples_;
};

}  // namespace symmem::bench
