#include "gemm.hpp"

#include <string>

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

const Gemm::Plan& Gemm::plan(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  auto key = std::make_tuple(m, n, k, lda, ldb, ldc);
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  auto* p = new Plan;
  SYMMEM_LT_CHECK(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // Column-major view: first operand B^T (n x k, ld ldb), second A^T (k x m, ld lda), C^T (n x m, ld ldc).
  SYMMEM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, n, k, ldb));
  SYMMEM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, k, m, lda));
  SYMMEM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->c, CUDA_R_16BF, n, m, ldc));
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
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, p->op, p->a, p->b, p->c, p->c, pref, 1, &p->algo, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    cublasLtMatmulDescDestroy(p->op);
    cublasLtMatrixLayoutDestroy(p->a);
    cublasLtMatrixLayoutDestroy(p->b);
    cublasLtMatrixLayoutDestroy(p->c);
    delete p;
    fail<CudaError>("cuBLASLt has no algorithm for a bf16 GEMM of " + std::to_string(m) + " x " + std::to_string(n) + " x " +
                    std::to_string(k));
  }
  plans_[key] = p;
  return *p;
}

void Gemm::run(int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc,
               cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  const Plan& p = plan(m, n, k, lda, ldb, ldc);
  const float alpha = 1.0f, beta = 0.0f;
  SYMMEM_LT_CHECK(cublasLtMatmul(handle_, p.op, &alpha, b, p.a, a, p.b, &beta, c, p.c, c, p.c, &p.algo.algo, workspace_,
                                 workspace_bytes_, stream));
}

}  // namespace symmem::overlap
