// ClockLog: NVML loaded at run time, sampled on a thread of its own (clocks.hpp).
#include "clocks.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>

namespace symmem::bench {
namespace {

constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;                         // NVML_CLOCK_SM
constexpr unsigned long long kSwPowerCap = 0x4ULL;      // nvmlClocksEventReasonSwPowerCap
constexpr unsigned long long kHwPowerBrake = 0x80ULL;   // nvmlClocksThrottleReasonHwPowerBrakeSlowdown

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

ClockStats clock_stats(const std::vector<ClockSample>& samples, const std::vector<std::pair<double, double>>& windows) {
  std::vector<double> mhz, watts;
  int capped = 0;
  bool known = true;
  for (const ClockSample& s : samples) {
    const bool inside = std::any_of(windows.begin(), windows.end(), [&](const std::pair<double, double>& w) { return s.t >= w.first && s.t <= w.second; });
    if (!inside) continue;
    mhz.push_back(s.sm_mhz);
    watts.push_back(s.power_w);
    capped += s.power_capped ? 1 : 0;
    known = known && s.capped_known;
  }
  ClockStats st;
  if (mhz.empty()) return st;
  st.samples = static_cast<int>(mhz.size());
  st.sm_mhz = median(mhz);
  st.power_w = median(watts);
  st.capped_share = known ? static_cast<double>(capped) / st.samples : -1;
  return st;
}

double ClockLog::now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ClockLog::off(const std::string& why) {
  why_not_ = why;
  device_ = nullptr;
}

ClockLog::ClockLog(int cuda_device, int period_us) : period_us_(std::max(100, period_us)) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) {
    off("libnvidia-ml.so.1 not found");
    return;
  }
  auto sym = [&](const char* name) { return dlsym(lib_, name); };
  auto init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  auto by_bus = reinterpret_cast<int (*)(const char*, void**)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  auto limit = reinterpret_cast<int (*)(void*, unsigned*)>(sym("nvmlDeviceGetEnforcedPowerLimit"));
  clock_info_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
  power_usage_ = reinterpret_cast<int (*)(void*, unsigned*)>(sym("nvmlDeviceGetPowerUsage"));
  reasons_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (reasons_ == nullptr) reasons_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  shutdown_ = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
  if (init == nullptr || by_bus == nullptr || clock_info_ == nullptr || power_usage_ == nullptr || reasons_ == nullptr || shutdown_ == nullptr) {
    shutdown_ = nullptr;  // (not initialised: nothing to shut down)
    off("NVML lacks an entry point the log needs");
    return;
  }
  if (init() != kNvmlSuccess) {
    shutdown_ = nullptr;  // (nothing to shut down)
    off("nvmlInit failed");
    return;
  }
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), cuda_device) != cudaSuccess) {
    (void)cudaGetLastError();
    off("no PCI bus id for CUDA device " + std::to_string(cuda_device));
    return;
  }
  void* dev = nullptr;
  if (by_bus(bus, &dev) != kNvmlSuccess || dev == nullptr) {
    off(std::string("NVML does not know the GPU at ") + bus);
    return;
  }
  device_ = dev;
  unsigned mw = 0;
  if (limit != nullptr && limit(device_, &mw) == kNvmlSuccess) limit_w_ = mw / 1000.0;
  ClockSample probe;
  if (!sample(probe)) off("an NVML query failed");
}

ClockLog::~ClockLog() {
  (void)stop();
  if (shutdown_ != nullptr) (void)shutdown_();
  if (lib_ != nullptr) dlclose(lib_);
}

bool ClockLog::sample(ClockSample& s) {
  unsigned mhz = 0, mw = 0;
  unsigned long long why = 0;
  s.t = now();
  if (clock_info_(device_, kNvmlClockSm, &mhz) != kNvmlSuccess || power_usage_(device_, &mw) != kNvmlSuccess) return false;
  s.sm_mhz = mhz;
  s.power_w = mw / 1000.0;
  s.capped_known = reasons_(device_, &why) == kNvmlSuccess;
  s.power_capped = s.capped_known && (why & (kSwPowerCap | kHwPowerBrake)) != 0;
  return true;
}

void ClockLog::start() {
  if (!enabled() || running_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    samples_.clear();
  }
  thread_ = std::thread([this] {
    while (running_.load(std::memory_order_relaxed)) {
      ClockSample s;
      if (sample(s)) {
        std::lock_guard<std::mutex> lock(mu_);
        samples_.push_back(s);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(period_us_));
    }
  });
}

std::vector<ClockSample> ClockLog::stop() {
  if (running_.exchange(false) && thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(samples_);
}

}  // namespace symmem::bench
