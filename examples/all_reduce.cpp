// symmem from C++: join the job, all-reduce a symmetric buffer, then split the ranks into
// tensor-parallel pairs and all-reduce inside each pair.
//   ./build/symmem-run -n 4 ./build/examples/all_reduce
// Exits 77 with a message where there is no GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include <symmem/symmem.hpp>

int main() {
  try {
    auto ctx = symmem::Context::init();
    symmem::Communicator comm(ctx);
    const int me = comm.rank(), n = comm.size();
    const size_t count = size_t(1) << 20;
    cudaStream_t stream;
    SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    // Every rank contributes rank + 1; the sum is n (n + 1) / 2 everywhere.
    symmem::SymmetricBuffer x = comm.alloc(count * sizeof(float));
    std::vector<float> host(count, static_cast<float>(me + 1));
    SYMMEM_CUDA_CHECK(cudaMemcpy(x.ptr(), host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    comm.all_reduce(x.ptr(), x.ptr(), count, symmem::DataType::kFloat32, symmem::ReduceOp::kSum, stream);
    ctx->synchronize(stream, "all_reduce");
    SYMMEM_CUDA_CHECK(cudaMemcpy(host.data(), x.ptr(), count * sizeof(float), cudaMemcpyDeviceToHost));
    const float want = n * (n + 1) / 2.0f;
    const bool sum_ok = host[0] == want && host[count - 1] == want;

    // Tensor-parallel pairs: ranks 2k and 2k + 1 (a lone last rank forms its own team).
    std::unique_ptr<symmem::Communicator> tp = comm.split(/*color=*/me / 2, /*key=*/me);
    symmem::SymmetricBuffer y = tp->alloc(count * sizeof(float));
    std::fill(host.begin(), host.end(), static_cast<float>(me));
    SYMMEM_CUDA_CHECK(cudaMemcpy(y.ptr(), host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    tp->all_reduce(y.ptr(), y.ptr(), count, symmem::DataType::kFloat32, symmem::ReduceOp::kMax, stream);
    ctx->synchronize(stream, "tensor-parallel all_reduce");
    SYMMEM_CUDA_CHECK(cudaMemcpy(host.data(), y.ptr(), count * sizeof(float), cudaMemcpyDeviceToHost));
    const float pair_max = static_cast<float>(std::min(me / 2 * 2 + 1, n - 1));
    const bool pair_ok = host[0] == pair_max && host[count - 1] == pair_max;
    const bool ok = sum_ok && pair_ok;
    std::printf("rank %d of %d: sum %s (%g), pair max %s (%g)\n", me, n, sum_ok ? "ok" : "WRONG", want,
                pair_ok ? "ok" : "WRONG", pair_max);
    tp->free(y);
    comm.free(x);
    SYMMEM_CUDA_CHECK(cudaStreamDestroy(stream));
    return ok ? 0 : 1;
  } catch (const symmem::Unsupported& e) {
    std::printf("all_reduce example skipped: %s\n", e.what());
    return 77;
  } catch (const symmem::Error& e) {
    std::fprintf(stderr, "all_reduce example failed: %s\n", e.what());
    return 1;
  }
}
