#pragma once
// Shared state of the GPU test binary: one context and heap per process, random data helpers.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "symmem/symmem.hpp"

namespace symmem::test {

std::shared_ptr<Context>& ctx();
Heap& heap();
/// One communicator over the world for the collective tests (made on first use).
Communicator& comm();
// An environment variable set for a scope (knobs are read when an object is made; a null value
// unsets it), then restored as it was (a setting given to the whole run comes back after).
struct ScopedEnv {
  std::string name, before;
  bool was;
  ScopedEnv(const char* n, const char* v) : name(n) {
    const char* b = std::getenv(n);
    was = b != nullptr;
    before = was ? b : "";
    if (v != nullptr) setenv(n, v, 1);
    else unsetenv(n);
  }
  ~ScopedEnv() {
    if (was) setenv(name.c_str(), before.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

inline bool have_nccl() { return comm().has_nccl(); }
/// Rounding steps the references allow for an algorithm: NCCL rounds at every ring step.
inline int steps_of(Algo a, int n) { return a == Algo::kNccl ? n - 1 : 1; }

/// Deterministic random bytes: any rank can regenerate any other rank's data.
inline std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 1);
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t x = g();
    for (size_t k = 0; k < 8 && i + k < n; ++k) v[i + k] = static_cast<uint8_t>(x >> (8 * k));
  }
  return v;
}

/// Device memory that frees itself.
struct DeviceBuffer {
  void* p = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t bytes) : n(bytes) { SYMMEM_CUDA_CHECK(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { cudaFree(p); }
  template <class T> T* as() const { return static_cast<T*>(p); }
};

inline void upload(void* dst, const std::vector<uint8_t>& v) {
  SYMMEM_CUDA_CHECK(cudaMemcpy(dst, v.data(), v.size(), cudaMemcpyHostToDevice));
}
inline std::vector<uint8_t> download(const void* src, size_t n) {
  std::vector<uint8_t> v(n);
  SYMMEM_CUDA_CHECK(cudaMemcpy(v.data(), src, n, cudaMemcpyDeviceToHost));
  return v;
}
constexpr uint8_t kPoison = 0xCD;

/// A CUDA graph of what enqueue(s) puts on stream s, instantiated (the caller destroys it with
/// cudaGraphExecDestroy). Where enqueue throws, the capture is ended and dropped first, so the
/// stream is usable again when the error reaches the test.
template <class F>
cudaGraphExec_t capture_graph(cudaStream_t s, F&& enqueue, cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal) {
  cudaGraph_t gr = nullptr;
  SYMMEM_CUDA_CHECK(cudaStreamBeginCapture(s, mode));
  try {
    enqueue();
  } catch (...) {
    if (cudaStreamEndCapture(s, &gr) == cudaSuccess && gr != nullptr) cudaGraphDestroy(gr);
    (void)cudaGetLastError();  // (an invalidated capture leaves its error behind)
    throw;
  }
  SYMMEM_CUDA_CHECK(cudaStreamEndCapture(s, &gr));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiate(&exec, gr, 0);
  cudaGraphDestroy(gr);
  SYMMEM_CUDA_CHECK(e);
  return exec;
}

/// Ranks agree on pass/fail before any of them asserts, so that one rank's failure never leaves
/// the others in a different operation. `msg` is this rank's reason ("" when it passed). Collective
/// over the world: every rank calls it at the same point. Returns "" when every rank passed, else a
/// report naming the failing ranks and their reasons (ranks with the same reason on one line).
inline std::string agree(const std::string& msg) {
  auto all = ctx()->world().all_gather(msg, "test verdict");
  bool alike = true;  // (a report every rank already agreed on, from an inner step, comes back as it is)
  for (const std::string& m : all) alike = alike && m == msg;
  if (alike && msg.rfind("\n  rank", 0) == 0) return msg;
  std::string report;
  std::vector<bool> told(all.size(), false);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty() || told[r]) continue;
    std::string who = std::to_string(r);
    int count = 1;
    for (size_t q = r + 1; q < all.size(); ++q)
      if (!told[q] && all[q] == all[r]) {
        told[q] = true;
        who += ", " + std::to_string(q);
        ++count;
      }
    report += (count > 1 ? "\n  ranks " : "\n  rank ") + who + ": " + all[r];
  }
  return report;
}
/// Runs f, returning "" or what it threw.
template <class F>
std::string attempt(F&& f) {
  try {
    f();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

/// One step of a test that runs several in a row on every rank (iterations, replays, settings):
/// step() returns this rank's failure ("" where it passed) or throws it, then the ranks agree, so
/// that all of them go on to the next step or all stop. (A rank that stopped alone would leave the
/// others waiting for it in the next step's operation until the timeout, which would then be
/// reported instead of the failure, and by the next test too: the record stays in the Context.)
/// Collective over the world. Returns "" where every rank passed, else agree()'s report; then
/// every rank also waits for its GPU's work (every wait is bounded) and clears the Context's error
/// record, so that the next test starts clean.
template <class F>
std::string agreed_step(F&& step) {
  std::string mine;
  const std::string threw = attempt([&] { mine = step(); });
  const std::string all = agree(threw.empty() ? mine : threw);
  if (!all.empty()) {
    (void)cudaDeviceSynchronize();
    ctx()->reset_error();
  }
  return all;
}

/// "" where call() raises InvalidArgument; else what it did instead, naming `what`.
template <class F>
std::string refusal(const char* what, F&& call) {
  try {
    call();
    return std::string(what) + " accepted; ";
  } catch (const InvalidArgument&) {
    return "";
  } catch (const std::exception& e) {
    return std::string(what) + " raised another error: " + e.what() + "; ";
  }
}

/// Asserts on every rank at once: fails (and returns) on all ranks when cond is false on any.
#define ASSERT_ALL(cond, what)                                                                       \
  do {                                                                                               \
    const bool symmem_ok_ = static_cast<bool>(cond);                                                 \
    std::ostringstream symmem_os_;                                                                   \
    if (!symmem_ok_) symmem_os_ << what;                                                             \
    std::string symmem_m_ = symmem_os_.str();                                                        \
    if (!symmem_ok_ && symmem_m_.empty()) symmem_m_ = "failed";                                      \
    const std::string symmem_v_ = ::symmem::test::agree(symmem_m_);                                  \
    ASSERT_TRUE(symmem_v_.empty()) << "failed on some ranks:" << symmem_v_;                          \
  } while (0)

/// Runs f on the team of this rank's parity (split by rank % 2): global ranks 0, 2, 4... and 1, 3,
/// 5..., so team ranks that are not global ones, and where the world is odd two team sizes at
/// once. `reversed`: in reverse order of the global ranks (keyed by -rank; team rank 0 is the
/// highest global rank). Skips below 3 ranks (a team of 2 and one of 1 or more). Collective over
/// the world.
template <class F>
void on_parity_teams(bool reversed, F&& f) {
  if (ctx()->size() < 3) GTEST_SKIP() << "needs 3 ranks (a team of 2 and one of 1 or more)";
  std::unique_ptr<Communicator> half;
  const int me = ctx()->rank();
  const std::string why = attempt([&] { half = comm().split(me % 2, reversed ? -me : me); });
  ASSERT_ALL(why.empty() && half, "split: " << why);
  f(*half);
}

/// Index of the first differing byte, or -1.
inline long first_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return static_cast<long>(i);
  return -1;
}

}  // namespace symmem::test
