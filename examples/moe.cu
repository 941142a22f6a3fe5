// symmem's expert-parallel dispatch and combine from C++: every rank routes its tokens to K of E
// experts (E / n on each rank), dispatch's send half moves each token once to every rank that holds
// one of its experts (this rank's own kernels could run before the receive half), a kernel of
// ours applies each local expert to the rows it received, and combine brings the results back
// weighted and summed. Each rank checks its tokens against a host reference; the ranks agree on
// the verdict through an all-reduce.
//   ./build/symmem-run -n 4 ./build/examples/moe
// Exits 77 with a message where there is no GPU.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include <symmem/moe.hpp>
#include <symmem/symmem.hpp>

namespace {

constexpr int kHidden = 1024, kTopK = 4, kExpertsPerRank = 8, kMaxTokens = 64;

// Expert e (global index) doubles its input (e % 4) times: exact in bf16, so the reference is simple.
__host__ __device__ float expert_scale(int e) { return static_cast<float>(1 << (e % 4)); }

// y[e][r] = expert(recv_x[e][r]) for the rows dispatch wrote (counts[e] of the capacity).
__global__ void run_experts(const __nv_bfloat16* recv_x, const int* counts, __nv_bfloat16* y, int capacity, int first_expert) {
  const int e = blockIdx.y;
  const float s = expert_scale(first_expert + e);
  const size_t rows = static_cast<size_t>(counts[e]) * kHidden, base = static_cast<size_t>(e) * capacity * kHidden;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    y[base + i] = __float2bfloat16(__bfloat162float(recv_x[base + i]) * s);
}

}  // namespace

int main() {
  try {
    auto ctx = symmem::Context::init();
    symmem::Communicator comm(ctx);
    const int me = comm.rank(), n = comm.size();
    symmem::moe::Config cfg;
    cfg.hidden = kHidden;
    cfg.topk = kTopK;
    cfg.num_experts = kExpertsPerRank * n;
    cfg.max_tokens = kMaxTokens;  // capacity 0: n x max_tokens rows an expert, which cannot overflow
    symmem::moe::ExpertParallel ep(comm, cfg);
    const int E = cfg.num_experts, El = ep.local_experts(), C = ep.capacity(), T = kMaxTokens - me;  // ranks differ in T

    // This rank's tokens, routing (distinct experts; every fifth token has only three) and weights.
    std::vector<__nv_bfloat16> x(static_cast<size_t>(T) * kHidden);
    std::vector<int> idx(static_cast<size_t>(T) * kTopK);
    std::vector<float> w(idx.size());
    for (int t = 0; t < T; ++t) {
      for (int h = 0; h < kHidden; ++h) x[static_cast<size_t>(t) * kHidden + h] = __float2bfloat16(((me * 131 + t * 7 + h) % 17 - 8) / 8.0f);
      for (int k = 0; k < kTopK; ++k) {
        idx[t * kTopK + k] = (k == kTopK - 1 && t % 5 == 0) ? -1 : (t * 5 + k * 3 + me) % E;
        w[t * kTopK + k] = (k + 1) / 8.0f;
      }
    }
    cudaStream_t stream;
    SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    __nv_bfloat16 *d_x, *d_recv, *d_y, *d_out;
    int *d_idx, *d_counts;
    float* d_w;
    const size_t expert_rows = static_cast<size_t>(El) * C * kHidden;
    SYMMEM_CUDA_CHECK(cudaMalloc(&d_x, x.size() * sizeof(__nv_bfloat16)));
    SYMMEM_CUDA_CHECK(cudaMalloc(&d_idx, idx.size() * sizeof(int)));
    SYMMEM_CUDA_CHECK(cudaMalloc(&d_w, w.size() * sizeof(float)));
    SYMMEM_CUDA_CHECK(cudaMalloc(&d_recv, expert_rows * sizeof(__nv_bfloat16)));
    SYMMEM_CUDA_CHECK(cudaMalloc(&d_y, expert_rows * sizeof(__nv_bfloat16)));
    SYMMEM_CUDA_CHECK(cudaMalloc(&d_counts, El * sizeof(int)));
    SYMMEM_CUDA_CHECK(cudaMalloc(&d_out, x.size() * sizeof(__nv_bfloat16)));
    SYMMEM_CUDA_CHECK(cudaMemcpy(d_x, x.data(), x.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    SYMMEM_CUDA_CHECK(cudaMemcpy(d_idx, idx.data(), idx.size() * sizeof(int), cudaMemcpyHostToDevice));
    SYMMEM_CUDA_CHECK(cudaMemcpy(d_w, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));

    // Dispatch in halves (with one round, the default): work of this rank's own could go between them.
    symmem::moe::DispatchIn in;
    in.x = d_x;
    in.topk_idx = d_idx;
    in.topk_weights = d_w;
    in.tokens = T;
    symmem::moe::DispatchOut out;
    out.recv_x = d_recv;
    out.expert_counts = d_counts;
    ep.dispatch_send(in, stream);
    ep.dispatch_recv(out, stream);
    run_experts<<<dim3(32, El), 256, 0, stream>>>(d_recv, d_counts, d_y, C, me * El);
    SYMMEM_CUDA_CHECK(cudaGetLastError());
    ep.combine(d_y, d_out, /*weighted=*/true, stream);
    ctx->synchronize(stream, "moe example");  // raises a timeout or a capacity overflow here

    // out[t] = sum over the token's experts of w * expert(x[t]), summed in fp32, rounded to bf16.
    std::vector<__nv_bfloat16> got(x.size());
    SYMMEM_CUDA_CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < kHidden; ++h) {
        const float v = __bfloat162float(x[static_cast<size_t>(t) * kHidden + h]);
        float ref = 0, mag = 0;
        for (int k = 0; k < kTopK; ++k)
          if (idx[t * kTopK + k] >= 0) {
            ref += w[t * kTopK + k] * v * expert_scale(idx[t * kTopK + k]);
            mag += std::fabs(w[t * kTopK + k] * v * expert_scale(idx[t * kTopK + k]));
          }
        // Each rank's partial and the result are rounded to bf16 (2^-9 relative each).
        if (std::fabs(__bfloat162float(got[static_cast<size_t>(t) * kHidden + h]) - ref) > mag / 128 + 1e-6f) ++bad;
      }

    // Every rank reports the same verdict: the wrong values of all ranks, summed.
    symmem::SymmetricBuffer verdict = comm.alloc(sizeof(int));
    SYMMEM_CUDA_CHECK(cudaMemcpy(verdict.ptr(), &bad, sizeof(int), cudaMemcpyHostToDevice));
    comm.all_reduce(verdict.ptr(), verdict.ptr(), 1, symmem::DataType::kInt32, symmem::ReduceOp::kSum, stream);
    ctx->synchronize(stream, "verdict");
    int bad_all = 0;
    SYMMEM_CUDA_CHECK(cudaMemcpy(&bad_all, verdict.ptr(), sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("rank %d of %d: %d tokens to %d experts (%d here, capacity %d), %zu bytes of symmetric memory; %s\n", me, n, T,
                E, El, C, ep.bytes_per_rank(), bad_all == 0 ? "dispatch + combine ok" : "WRONG values");
    comm.free(verdict);
    for (void* p : {static_cast<void*>(d_x), static_cast<void*>(d_idx), static_cast<void*>(d_w), static_cast<void*>(d_recv),
                    static_cast<void*>(d_y), static_cast<void*>(d_counts), static_cast<void*>(d_out)})
      cudaFree(p);
    SYMMEM_CUDA_CHECK(cudaStreamDestroy(stream));
    return bad_all == 0 ? 0 : 1;
  } catch (const symmem::Unsupported& e) {
    std::printf("moe example skipped: %s\n", e.what());
    return 77;
  } catch (const symmem::Error& e) {
    std::fprintf(stderr, "moe example failed: %s\n", e.what());
    return 1;
  }
}
