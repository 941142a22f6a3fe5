#include "symmem/context.hpp"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "call_scope.hpp"
#include "device_code.hpp"
#include "log.hpp"
#include "symmem/error.hpp"

namespace symmem {

extern "C" char** environ;

// A misspelt SYMMEM_ setting would be ignored silently: said once a process, by local rank 0 (the
// ranks of a host share their environment), whatever SYMMEM_DEBUG is.
static void warn_misspelt_settings(int local_rank) {
  static std::atomic<bool> said{false};
  if (local_rank != 0 || said.exchange(true)) return;
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) names.emplace_back(*e, std::strcspn(*e, "="));
  for (const auto& [name, meant] : detail::misspelt_settings(names))
    detail::log_line(detail::LogLevel::kWarn, name + " is no symmem setting and is ignored (did you mean " + meant +
                                                 "?); `symmem-run --env` lists the settings");
}

std::shared_ptr<Context> Context::init() { return std::make_shared<Context>(Bootstrap::from_env()); }

Context::Context(std::shared_ptr<Bootstrap> boot) : Context(std::move(boot), nullptr) {}
Context::Context(std::shared_ptr<Bootstrap> boot, Settings settings) : Context(std::move(boot), &settings) {}

Context::Context(std::shared_ptr<Bootstrap> boot, const Settings* given) : boot_(std::move(boot)) {
  require(boot_ != nullptr, "Context: bootstrap is null");
  world_ = Team::world(boot_);
  warn_misspelt_settings(boot_->config().local_rank);
  // A rank that cannot read its settings or take its GPU says so to every rank (one exchange at
  // start-up), instead of throwing alone while the others wait for it in their first exchange until
  // the bound. It raises its own error; the others raise "symmem::Context: rank R refused: ...".
  // SYMMEM_DEBUG_CHECKS must be alike (a checked call exchanges what an unchecked one does not).
  std::exception_ptr own;
  std::string refusal;
  try {
    settings_ = given != nullptr ? *given : settings_from_env();
    take_device();
  } catch (const std::exception& e) {
    own = std::current_exception();
    refusal = *e.what() ? e.what() : "failed";
    if (error_host_) cudaFreeHost(error_host_);
    error_host_ = nullptr;
  }
  try {
    world_.require_same(std::string("SYMMEM_DEBUG_CHECKS=") + (settings_.debug_checks ? "1" : "0"), "symmem::Context", refusal, "",
                        "; set SYMMEM_DEBUG_CHECKS alike on every rank (or on none)");
  } catch (...) {
    if (own) std::rethrow_exception(own);
    throw;
  }
}

// The GPU this rank runs on (the bootstrap's device, else LOCAL_RANK / ranks_per_gpu), made
// current, and the mapped record device-side waits report their failures in.
void Context::take_device() {
  const BootstrapConfig& c = boot_->config();
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    fail<Unsupported>(std::string("no CUDA GPU is visible (cudaGetDeviceCount: ") + cudaGetErrorString(rc) +
                      "): run on a machine with an NVIDIA GPU and driver, and check CUDA_VISIBLE_DEVICES");
  }
  device_ = c.device >= 0 ? c.device : c.local_rank / c.ranks_per_gpu;
  if (device_ >= count)
    fail("LOCAL_RANK " + std::to_string(c.local_rank) + " maps to GPU " + std::to_string(device_) + " but only " +
         std::to_string(count) + " GPU(s) are visible: start at most " + std::to_string(count * c.ranks_per_gpu) +
         " ranks on this host, or let ranks share GPUs (symmem-run --ranks-per-gpu K)");
  SYMMEM_CUDA_CHECK(cudaSetDevice(device_));
  SYMMEM_CUDA_CHECK(cudaFree(nullptr));  // create the primary context now, not inside a timed region
  // The library's kernels must have code for this GPU (else every launch fails with "no kernel
  // image"); code generated for an older architecture runs, without what sm_90 adds.
  int major = 0, minor = 0;
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_));
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_));
  const std::string cc = std::to_string(major) + "." + std::to_string(minor);
  const int code = detail::device_code_arch();
  if (code == 0)
    fail<Unsupported>("symmem was built without code for GPU " + std::to_string(device_) + " (compute capability " + cc +
                      "): rebuild with CMAKE_CUDA_ARCHITECTURES including " + std::to_string(major * 10 + minor) +
                      " (symmem's default is 90: H100, H200)");
  static std::atomic<bool> warned{false};  // once a process, not once a Context
  if (major >= 9 && code < 900 && !warned.exchange(true))
    SYMMEM_LOG(kWarn, "symmem's kernels for GPU " + std::to_string(device_) + " (compute capability " + cc + ") come from code for sm_" +
                          std::to_string(code / 10) + ", which has neither programmatic dependent launch nor the bulk-copy unit; "
                          "build with CMAKE_CUDA_ARCHITECTURES including 90 for them");
  SYMMEM_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&error_host_), sizeof(DeviceErrorRecord), cudaHostAllocMapped));
  std::memset(error_host_, 0, sizeof(DeviceErrorRecord));
  error_host_->timeout_ns = timeout_ns();
  SYMMEM_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&error_dev_), error_host_, 0));
  // The word device code claims the record's first error on (record_error): in device memory.
  SYMMEM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&error_claim_), sizeof(unsigned int)));
  SYMMEM_CUDA_CHECK(cudaMemsetAsync(error_claim_, 0, sizeof(unsigned int), 0));
  SYMMEM_CUDA_CHECK(cudaStreamSynchronize(0));  // (the zero is in place before a kernel on any stream may claim)
  error_host_->claim = error_claim_;
}

Context::~Context() {
  if (error_claim_) {
    detail::DeviceGuard on(device_, std::nothrow);
    cudaFree(error_claim_);
  }
  if (error_host_) cudaFreeHost(error_host_);
}

void Context::set_device_timeout_ms(int ms) {
  require(ms > 0, "set_device_timeout_ms: ms=" + std::to_string(ms) + " must be positive");
  settings_.device_timeout_ms = ms;
  *reinterpret_cast<volatile unsigned long long*>(&error_host_->timeout_ns) = timeout_ns();
}

std::string describe_device_error(const DeviceErrorRecord& r) {
  if (r.kind == static_cast<int>(WaitKind::kBadCount)) {
    const unsigned kind = static_cast<unsigned>(r.slot >> 32), index = static_cast<unsigned>(r.slot & 0xFFFFFFFFu);
    const std::string who = "team rank " + std::to_string(r.peer);
    if (kind == 0)
      return "all_to_all_v: " + who + "'s send_counts[" + std::to_string(index) + "] is " +
             std::to_string(static_cast<long long>(r.seen)) + "; counts must be >= 0. Nothing was moved on any rank";
    if (kind == 1)
      return "all_to_all_v: " + who + "'s send_counts add up to " + std::to_string(r.seen) + " elements, but its input holds " +
             std::to_string(r.expected) + " (from `in` to the end of its symmetric buffer). Nothing was moved on any rank";
    return "all_to_all_v: " + who + " would receive " + std::to_string(r.seen) + " elements, but its out_count is " +
           std::to_string(r.expected) + ". Nothing was moved on any rank; pass a larger output";
  }
  if (r.kind == static_cast<int>(WaitKind::kMoe)) {
    const unsigned kind = static_cast<unsigned>(r.slot >> 32), index = static_cast<unsigned>(r.slot & 0xFFFFFFFFu);
    if (kind == 1)
      return "moe dispatch: rank " + std::to_string(r.global_rank) + "'s topk_idx holds expert " +
             std::to_string(static_cast<long long>(r.seen)) + " (token " + std::to_string(index) + "), outside [0, " +
             std::to_string(r.expected) + ") and not -1; that entry was skipped";
    if (kind == 5)
      return "moe dispatch: team rank " + std::to_string(r.peer) + "'s topk_idx held an expert outside [0, num_experts) and not -1 in operation " +
             std::to_string(r.seen) + " (that rank reports the token and index); those entries were skipped";
    if (kind == 4)
      return "moe dispatch: team rank " + std::to_string(r.peer) + " had a local expert over its capacity in operation " +
             std::to_string(r.seen) + " (that rank reports the expert and count); its extra tokens were dropped. Raise moe::Config::capacity";
    if (kind == 3)
      return "moe combine: called a second time for one dispatch on rank " + std::to_string(r.global_rank) +
             " (every combine follows its own dispatch); nothing was sent";
    return "moe dispatch: local expert " + std::to_string(index) + " of rank " + std::to_string(r.global_rank) + " received " +
           std::to_string(r.seen) + " tokens, over its capacity of " + std::to_string(r.expected) +
           "; the first " + std::to_string(r.expected) + " were kept. Raise moe::Config::capacity";
  }
  if (r.kind == static_cast<int>(WaitKind::kAborted)) return "the operation was aborted (Communicator::abort or a failure before it)";
  static const char* cmps[] = {"==", "!=", ">=", ">", "<=", "<"};
  std::string peer = r.peer >= 0 ? "team rank " + std::to_string(r.peer) : "any peer";
  const bool ring = r.kind == static_cast<int>(WaitKind::kMoeRing);
  if (r.kind == static_cast<int>(WaitKind::kMoeLines) || r.kind == static_cast<int>(WaitKind::kMoeCombineLines)) {
    const bool combine = r.kind == static_cast<int>(WaitKind::kMoeCombineLines);
    const std::string which = combine && r.slot == ~0ull ? "its header line" : "line " + std::to_string(r.slot) + " of a slot";
    return "device wait timed out: rank " + std::to_string(r.global_rank) + " (team rank " + std::to_string(r.rank) + ", block " +
           std::to_string(r.block) + ", thread " + std::to_string(r.thread) + ") waited " + std::to_string(r.waited_ns / 1000000ull) +
           " ms for a line of the MoE small-round " + (combine ? "combine" : "dispatch") + " from " + peer + ": " + which + " with flag " +
           std::to_string(r.expected) + ", last flag seen " + std::to_string(r.seen) +
           ". The peer may have exited, hung, or skipped this operation; raise SYMMEM_TIMEOUT_MS if it is only slow";
  }
  static const char* kinds[] = {"?", "a signal", "a barrier arrival", "a collective's flag"};
  const bool word = r.kind == static_cast<int>(WaitKind::kWord);
  const std::string what = ring   ? "a word of the MoE streamed dispatch or combine (a peer's announce, a ring slot's ready or "
                                    "release word, or the dispatch's send blocks' barrier)"
                           : word ? "a word of a symmetric buffer (device::wait_word or wait_word_relaxed)"
                                  : kinds[r.kind >= 0 && r.kind <= 3 ? r.kind : 0];
  return "device wait timed out: rank " + std::to_string(r.global_rank) + " (team rank " + std::to_string(r.rank) +
         ", block " + std::to_string(r.block) + ", thread " + std::to_string(r.thread) + ") waited " +
         std::to_string(r.waited_ns / 1000000ull) + " ms for " + what + " from " + peer + ": " + (ring ? "word " : word ? "the word at byte " : "signal slot ") +
         std::to_string(static_cast<int64_t>(r.slot)) + " " + cmps[r.cmp >= 0 && r.cmp <= 5 ? r.cmp : 0] +
         " " + std::to_string(r.expected) + ", last value seen " + std::to_string(r.seen) +
         ". The peer may have exited, hung, or skipped this operation; raise SYMMEM_TIMEOUT_MS if it is only slow";
}

void Context::check(const std::string& op) const {
  volatile unsigned int* flag = &error_host_->flag;
  if (*flag == 0) return;
  const std::string prefix = op.empty() ? "" : op + ": ";
  {
    std::lock_guard<std::mutex> lock(host_error_mu_);
    if (!host_error_.empty()) fail<Timeout>(prefix + host_error_);
  }
  // The device may still be writing the record; it takes microseconds (bounded, in case the
  // writer died mid-way).
  for (int spins = 0; *flag == 1 && spins < 1000000; ++spins) {
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  const std::string what = prefix + describe_device_error(*error_host_);
  if (error_host_->kind == static_cast<int>(WaitKind::kBadCount) || error_host_->kind == static_cast<int>(WaitKind::kMoe)) {
    // A bad argument is reported once; nothing waits on it.
    const_cast<Context*>(this)->reset_error();
    fail<InvalidArgument>(what);
  }
  fail<Timeout>(what);
}

void Context::fail_waits(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(host_error_mu_);
    if (host_error_.empty()) host_error_ = why;
  }
  volatile DeviceErrorRecord* r = error_host_;
  r->abort_waits = 1;
  if (r->flag == 0) {
    r->kind = static_cast<int>(WaitKind::kAborted);
    r->flag = 2;
  }
}

void Context::reset_error() {
  {
    std::lock_guard<std::mutex> lock(host_error_mu_);
    host_error_.clear();
  }
  // Every field before `generation` cleared (`claim` stays: a writer never sees it null), then a
  // new generation: the device's claim word then admits the next error (record_error).
  const unsigned int generation = error_host_->generation + 1u;
  std::memset(error_host_, 0, offsetof(DeviceErrorRecord, generation));
  error_host_->timeout_ns = timeout_ns();
  std::atomic_thread_fence(std::memory_order_release);
  *reinterpret_cast<volatile unsigned int*>(&error_host_->generation) = generation;
}

void Context::synchronize(cudaStream_t stream, const std::string& op) const {
  cudaError_t rc = cudaStreamSynchronize(stream);
  check(op);
  SYMMEM_CUDA_CHECK(rc);
}

}  // namespace symmem
