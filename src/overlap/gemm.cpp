#include "gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "symmem/error.hpp"

namespace symmem::overlap {

#define SYMMEM_LT_CHECK(expr)                                                                                  \
  do {                                                                                                       \
    cublasStatus_t st_ = (expr);                                                                             \
    if (st_ != CUBLAS_STATUS_SUCCESS) fail<CudaError>(std::string(#expr) + " failed: cuBLAS status " + std::to_string(st_)); \
  } while (0)

// Row-major C = A x B is column-major C^T = B^T x A^T: cuBLASLt multiplies (n x k) by (k x m).
struct Gemm::Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};
  std::vector<cublasLtMatmulHeuristicResult_t> candidates;  // cuBLASLt's ranking, best first
  bool tuned = false;
};

Gemm::Gemm(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  SYMMEM_LT_CHECK(cublasLtCreate(&handle_));
  SYMMEM_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
}

Gemm::~Gemm() {
  for (auto& kv : plans_) {
    cublasLtMatmulDescDestroy(kv.second->op);
    cublasLtMatrixLayoutDestroy(kv.second->a);
    cublasLtMatrixLayoutDestroy(kv.second->b);
    cublasLtMatrixLayoutDestroy(kv.second->c);
    delete kv.second;
  }
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(handle_);
}

Gemm::Plan& Gemm::plan(const Key& key) {
  const auto [m, n, k, lda, ldb, ldc, stride_a, stride_c, batch, dtype] = key;
  require(dtype == DataType::kBFloat16 || dtype == DataType::kFloat16, "overlap GEMM: dtype ", dtype_name(dtype), " is not bf16 or fp16");
  const cudaDataType_t t = dtype == DataType::kFloat16 ? CUDA_R_16F : CUDA_R_16BF;
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  auto* p = new Plan;
  SYMMEM_LT_CHECK(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // Column-major view: first operand B^T (n x k, ld ldb), second A^T (k x m, ld lda), C^T (n x m, ld ldc).
  SYMMEM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->a, t, n, k, ldb));
  SYMMEM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->b, t, k, m, lda));
  SYMMEM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->c, t, n, m, ldc));
  if (batch > 1) {
    const int64_t none = 0;  // B is shared by every instance
    for (auto [layout, stride] : {std::pair{p->a, none}, std::pair{p->b, stride_a}, std::pair{p->c, stride_c}}) {
      SYMMEM_LT_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
      SYMMEM_LT_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
    }
  }
  cublasLtMatmulPreference_t pref;
  SYMMEM_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  SYMMEM_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                                       sizeof(workspace_bytes_)));
  // Operands start at row offsets of shards, not at 256-byte boundaries: ask for algorithms that
  // need 16 bytes only (the callers check that much).
  const uint32_t align = 16;
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    SYMMEM_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align)));
  int found = 0;
  p->candidates.resize(kCandidates);
  cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(handle_, p->op, p->a, p->b, p->c, p->c, pref, kCandidates, p->candidates.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    cublasLtMatmulDescDestroy(p->op);
    cublasLtMatrixLayoutDestroy(p->a);
    cublasLtMatrixLayoutDestroy(p->b);
    cublasLtMatrixLayoutDestroy(p->c);
    delete p;
    fail<CudaError>("cuBLASLt has no algorithm for a " + std::string(dtype_name(dtype)) + " GEMM of " + std::to_string(m) + " x " + std::to_string(n) + " x " +
                    std::to_string(k) + (batch > 1 ? " (batch " + std::to_string(batch) + ")" : std::string()));
  }
  p->candidates.resize(found);
  p->algo = p->candidates[0];
  plans_[key] = p;
  return *p;
}

// An algorithm's configuration in words (algorithm, tile, stages, split-K, cluster ids).
static std::string config_of(const cublasLtMatmulAlgo_t& algo) {
  std::string s;
  const std::pair<cublasLtMatmulAlgoConfigAttributes_t, const char*> attrs[] = {
      {CUBLASLT_ALGO_CONFIG_ID, "algo"},          {CUBLASLT_ALGO_CONFIG_TILE_ID, "tile"},
      {CUBLASLT_ALGO_CONFIG_STAGES_ID, "stages"}, {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "splitk"},
      {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "cluster"}};
  for (const auto& [attr, name] : attrs) {
    uint64_t v = 0;  // (sizes must match exactly: asked first; at most 8 bytes, little-endian)
    size_t size = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &size) == CUBLAS_STATUS_SUCCESS && size <= sizeof(v) &&
        cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, size, &size) == CUBLAS_STATUS_SUCCESS)
      s += std::string(s.empty() ? "" : " ") + name + " " + std::to_string(v);
  }
  return s;
}

// Times cuBLASLt's candidates on this shape and keeps the fastest: the heuristic ranks them by a
// model, and the overlap's block GEMMs (M/N rows) are shapes where its pick could leave a partial
// last wave. (Measured at TP = 4: the 2048 x 3584 x 4096 block went 80.8 -> 78.4 us, within the
// run-to-run spread; what costs there is the tile count itself.) Another candidate replaces the
// heuristic's first only where it is kTuneMargin faster: candidates within a percent of each other
// alone differ under the overlap's copies (2 x H100, the 1024 x 4096 x 7168 halves of
// matmul_reduce_scatter: tile 20 timed 70.4 us alone against the first's 71.1, yet the call took
// 337 us with it and 297 with the first).
// The candidates run in turn, kTuneRuns launches each, for kTuneRounds rounds with no gap on the
// GPU within a round (an event between candidates, one synchronisation a round, each round
// starting one candidate later), and each keeps its median round: a GPU at its power cap runs a
// GEMM at the clock that what ran before it left, so timing one candidate's launches after
// another's (as this did until session 56) ranked them by when they ran. On one H200 that kept
// tile 248 (1450 us, at the cap) for 16384 x 4096 x 7168 over tile 29 (1338), and the pick changed
// from process to process (symmem-bench overlap's floor moved by 3-7% between runs;
// tools/hgemm_probe.cu, HGEMM_CANDIDATES). Runs on a private stream into scratch output (the
// operands are only read), so it orders against nothing of the caller's; this thread is put in
// relaxed capture mode meanwhile, so another thread's global-mode capture is not disturbed.
// Skipped while `stream` is capturing (the plan is tuned at the next uncaptured call).
void Gemm::tune(Plan& p, size_t out_bytes, const void* a, const void* b, cudaStream_t stream) {
  p.tuned = true;
  if (p.candidates.size() < 2) return;
  static const char* const setting = std::getenv("SYMMEM_GEMM_TUNE");  // "0": off; "verbose": each candidate's time on stderr
  static const bool enabled = setting == nullptr || std::strcmp(setting, "0") != 0;
  static const bool verbose = setting != nullptr && std::strcmp(setting, "verbose") == 0;
  if (!enabled) return;
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone) {
    (void)cudaGetLastError();
    p.tuned = false;
    return;
  }
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  void* scratch = nullptr;
  cudaStream_t s = nullptr;
  const size_t n = p.candidates.size();
  std::vector<cudaEvent_t> marks(n + 1, nullptr);  // marks[i] .. marks[i + 1]: candidate i's launches in a round
  bool have_marks = true;
  for (cudaEvent_t& e : marks) have_marks = cudaEventCreate(&e) == cudaSuccess && have_marks;
  // Scratch output, then a workspace of its own: the caller's GEMMs may still be using workspace_.
  out_bytes = (out_bytes + 255) & ~size_t(255);
  const size_t bytes = out_bytes + workspace_bytes_;
  // Stream-ordered allocation: cudaFree would synchronise the device, i.e. wait for the caller's
  // stream, which may be waiting for peers.
  if (have_marks && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess && cudaMallocAsync(&scratch, bytes, s) == cudaSuccess) {
    const float alpha = 1.0f, beta = 0.0f;
    auto once = [&](size_t i) {
      return cublasLtMatmul(handle_, p.op, &alpha, b, p.a, a, p.b, &beta, scratch, p.c, scratch, p.c, &p.candidates[i].algo,
                            static_cast<char*>(scratch) + out_bytes, workspace_bytes_, s) == CUBLAS_STATUS_SUCCESS;
    };
    std::vector<bool> runs(n);
    cudaEventRecord(marks[0], s);
    for (size_t i = 0; i < n; ++i) {  // (and a first warm-up pass; marks[0] .. marks[1]: the first candidate's launch)
      runs[i] = once(i);
      if (i == 0) cudaEventRecord(marks[1], s);
    }
    // Then the first candidate alone for about kTuneWarmMs, so that the rounds start with the GPU at
    // its power cap, where the overlap runs its GEMMs: below it, plans that differ at the cap time
    // alike (session 57: tile 248 kept over tile 29 at 16384 x 4096 x 7168, 1435 us against ~1370).
    float first_ms = 0;
    if (runs[0] && cudaEventSynchronize(marks[1]) == cudaSuccess && cudaEventElapsedTime(&first_ms, marks[0], marks[1]) == cudaSuccess &&
        first_ms > 0) {
      const int warm = static_cast<int>(std::min(256.0f, std::ceil(kTuneWarmMs / first_ms)));
      for (int l = 0; l < warm && runs[0]; ++l) runs[0] = once(0);
    }
    std::vector<std::vector<float>> ms(n);
    for (int r = 0; r < kTuneRounds; ++r) {  // (round r starts at candidate r: none always follows the round's gap)
      for (size_t j = 0; j < n; ++j) {
        const size_t i = (j + r) % n;
        cudaEventRecord(marks[j], s);
        for (int l = 0; l < kTuneRuns && runs[i]; ++l) runs[i] = once(i);
      }
      cudaEventRecord(marks[n], s);
      if (cudaEventSynchronize(marks[n]) != cudaSuccess) break;
      for (size_t j = 0; j < n; ++j) {
        const size_t i = (j + r) % n;
        float t = 0;
        if (runs[i] && cudaEventElapsedTime(&t, marks[j], marks[j + 1]) == cudaSuccess) ms[i].push_back(t);
      }
    }
    std::string report;
    std::vector<float> median(n, -1.0f);
    for (size_t i = 0; i < n; ++i) {
      if (!runs[i] || ms[i].size() != static_cast<size_t>(kTuneRounds)) continue;
      std::sort(ms[i].begin(), ms[i].end());
      median[i] = ms[i][ms[i].size() / 2];
      if (verbose) report += "  " + std::to_string(median[i] * 1000 / kTuneRuns) + " us: " + config_of(p.candidates[i].algo) + "\n";
    }
    const size_t pick = choose(median);
    if (pick < n) p.algo = p.candidates[pick];
    if (verbose) std::fprintf(stderr, "# gemm tune (output %zu bytes): chose %s\n%s", out_bytes, config_of(p.algo.algo).c_str(), report.c_str());
  }
  if (scratch) cudaFreeAsync(scratch, s);
  if (s) cudaStreamSynchronize(s);
  (void)cudaGetLastError();  // a candidate that failed to launch is skipped, not reported
  for (cudaEvent_t e : marks)
    if (e) cudaEventDestroy(e);
  if (s) cudaStreamDestroy(s);
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
}

// The plan of `key` (tuned at its first uncaptured call; out_bytes: the output's extent), then
// D = alpha * A x B + beta * C_in.
void Gemm::matmul(const Key& key, size_t out_bytes, const void* a, const void* b, float alpha, float beta, const void* c_in, void* d,
                  cudaStream_t stream) {
  Plan& p = plan(key);
  if (!p.tuned) tune(p, out_bytes, a, b, stream);
  SYMMEM_LT_CHECK(cublasLtMatmul(handle_, p.op, &alpha, b, p.a, a, p.b, &beta, c_in, p.c, d, p.c, &p.algo.algo, workspace_,
                                 workspace_bytes_, stream));
}

void Gemm::run_acc(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, const void* c_in, float alpha,
                   float beta, void* d, int64_t ldd, cudaStream_t stream, DataType dtype) {
  if (m == 0 || n == 0) return;
  // (the plan of run's shape: C_in and D share its layout)
  matmul(Key{m, n, k, lda, ldb, ldd, 0, 0, 1, dtype}, static_cast<size_t>(m) * static_cast<size_t>(ldd) * 2, a, b, alpha, beta, c_in, d, stream);
}

std::string Gemm::describe(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, DataType dtype) const {
  auto it = plans_.find(Key{m, n, k, lda, ldb, ldc, 0, 0, 1, dtype});
  return it == plans_.end() ? std::string() : config_of(it->second->algo.algo);
}

size_t Gemm::choose(const std::vector<float>& t) {
  size_t pick = t.size();
  float best = -1;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] < 0) continue;
    if (pick == t.size()) {  // the heuristic's pick (the first that ran) stays unless another beats it by kTuneMargin
      pick = i;
      best = t[i] * (1.0f - kTuneMargin);
    } else if (t[i] < best) {
      pick = i;
      best = t[i];
    }
  }
  return pick;
}

std::vector<std::string> Gemm::candidates(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, DataType dtype) {
  std::vector<std::string> out;
  for (const auto& c : plan(Key{m, n, k, lda, ldb, ldc, 0, 0, 1, dtype}).candidates) out.push_back(config_of(c.algo));
  return out;
}

void Gemm::pick(size_t i, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, DataType dtype) {
  Plan& p = plan(Key{m, n, k, lda, ldb, ldc, 0, 0, 1, dtype});
  require(i < p.candidates.size(), "Gemm::pick: candidate ", i, " of ", p.candidates.size());
  p.algo = p.candidates[i];
  p.tuned = true;
}

void Gemm::run_batched(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, void* c,
                       int64_t ldc, int64_t stride_c, int batch, cudaStream_t stream, DataType dtype) {
  if (m == 0 || n == 0 || batch <= 0) return;
  if (batch == 1) stride_a = stride_c = 0;
  // The output's extent: the last instance's start plus one matrix (scratch for the timing runs).
  matmul(Key{m, n, k, lda, ldb, ldc, stride_a, stride_c, batch, dtype},
         (static_cast<size_t>(stride_c) * (batch - 1) + static_cast<size_t>(m) * static_cast<size_t>(ldc)) * 2, a, b, 1.0f, 0.0f, c, c, stream);
}

}  // namespace symmem::overlap
