#pragma once
// Internal: row-major bf16 or fp16 GEMM with fp32 accumulation through cuBLASLt.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "symmem/export.hpp"
#include "symmem/types.hpp"

namespace symmem::overlap {

class SYMMEM_API Gemm {  // (exported for symmem-bench)
 public:
  explicit Gemm(size_t workspace_bytes);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  /// C [m, n] (ldc elements per row) = A [m, k] (lda) x B [k, n] (ldb), all of `dtype` (bf16 or
  /// fp16), row-major; C may be
  /// peer memory (the epilogue then stores over NVLink). The first uncaptured call of a shape times
  /// cuBLASLt's candidates for it and keeps the fastest (SYMMEM_GEMM_TUNE=0: the first candidate);
  /// a shape first seen under graph capture runs the first candidate until an uncaptured call.
  void run(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc,
           cudaStream_t stream, DataType dtype = DataType::kBFloat16) {
    run_batched(m, n, k, a, lda, 0, b, ldb, c, ldc, 0, 1, stream, dtype);
  }
  /// D [m, n] (ldd) = alpha * A x B + beta * C_in [m, n] (ldd as well), in fp32 before the one
  /// rounding to `dtype` (the epilogue adds C_in: no pass of its own over the output). C_in may be D.
  void run_acc(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, const void* c_in, float alpha,
               float beta, void* d, int64_t ldd, cudaStream_t stream, DataType dtype = DataType::kBFloat16);
  /// `batch` GEMMs in one launch: A and C of instance i start stride_a / stride_c elements after
  /// instance i-1's; every instance multiplies by the same B. One grid over all instances' tiles,
  /// so two blocks of rows cost what one GEMM of their total rows costs (no partial wave each).
  void run_batched(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, void* c,
                   int64_t ldc, int64_t stride_c, int batch, cudaStream_t stream, DataType dtype = DataType::kBFloat16);
  /// The cuBLASLt configuration the plan of run's shape uses now (algorithm, tile, stages,
  /// split-K, cluster ids), for benchmarks' probes; "" where no plan was made for it.
  std::string describe(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                       DataType dtype = DataType::kBFloat16) const;
  /// For probes: cuBLASLt's candidates for run's shape (its ranking, best first), each described
  /// as describe() does; and pick(i, ...): that shape's plan runs candidate i from now on, untuned.
  std::vector<std::string> candidates(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                                      DataType dtype = DataType::kBFloat16);
  void pick(size_t i, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, DataType dtype = DataType::kBFloat16);
  /// The tuner's choice from the candidates' times in cuBLASLt's order (negative: did not run):
  /// the first that ran, unless others run more than kTuneMargin faster than it, then the fastest
  /// of those; t.size() where none ran. Host-tested.
  static size_t choose(const std::vector<float>& t);

 private:
  struct Plan;
  static constexpr int kCandidates = 16, kTuneRuns = 2, kTuneRounds = 5;
  static constexpr float kTuneMargin = 0.03f, kTuneWarmMs = 25.0f;  // (tune)
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, DataType>;
  Plan& plan(const Key& key);
  void tune(Plan& p, size_t out_bytes, const void* a, const void* b, cudaStream_t stream);
  void matmul(const Key& key, size_t out_bytes, const void* a, const void* b, float alpha, float beta, const void* c_in, void* d,
              cudaStream_t stream);
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::map<Key, Plan*> plans_;  // (m, n, k, lda, ldb, ldc, stride_a, stride_c, batch, dtype)
};

}  // namespace symmem::overlap
