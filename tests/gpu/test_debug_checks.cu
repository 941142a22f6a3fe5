// SYMMEM_DEBUG_CHECKS=1 (ctest multigpu_debug_checks_2ranks_1gpu): calls whose arguments differ
// across ranks, or that one rank refuses, are refused on every rank, naming what differs or the
// rank and its reason, before anything is launched; and a communicator, TensorParallel and
// ExpertParallel still work after the refusals. Skipped without it.
#include <cuda_runtime_api.h>

#include "gpu_env.hpp"
#include "symmem/moe.hpp"
#include "symmem/overlap.hpp"

using namespace symmem;
using namespace symmem::test;

TEST(DebugChecks, ArgumentsThatDifferAreRefusedOnEveryRank) {
  if (!ctx()->settings().debug_checks) GTEST_SKIP() << "needs SYMMEM_DEBUG_CHECKS=1";
  const int n = comm().size(), me = comm().rank(), last = n - 1;
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  std::string why;
  // A collective: a count unlike on the last rank, then a different collective there.
  SymmetricBuffer buf = comm().alloc(4096 * sizeof(float));
  upload(buf.ptr(), random_bytes(4096 * sizeof(float), 11 + me));
  why = attempt([&] { comm().all_reduce(buf.ptr(), buf.ptr(), me == last ? 1000 : 1024, DataType::kFloat32, ReduceOp::kSum, nullptr); });
  ASSERT_ALL(why.find("all_reduce: arguments differ across ranks (count") != std::string::npos, "got '" << why << "'");
  why = attempt([&] {
    if (me == last) comm().all_gather(static_cast<float*>(buf.ptr()) + 16 * n, buf.ptr(), 16, DataType::kFloat32, nullptr);
    else comm().all_reduce(buf.ptr(), buf.ptr(), 16 * n, DataType::kFloat32, ReduceOp::kSum, nullptr);
  });
  ASSERT_ALL(why.find("arguments differ across ranks (call") != std::string::npos, "got '" << why << "'");
  // Arguments only the last rank refuses (its checks of its own): raised on every rank.
  const std::string refused = "rank " + std::to_string(last) + " refused: ";
  why = attempt([&] { comm().all_reduce(buf.ptr(), me == last ? nullptr : buf.ptr(), 1024, DataType::kFloat32, ReduceOp::kSum, nullptr); });
  ASSERT_ALL(why.find("all_reduce: " + refused + "all_reduce: out is null") != std::string::npos, "got '" << why << "'");
  why = attempt([&] {
    comm().reduce_scatter(buf.ptr(), static_cast<char*>(buf.ptr()) + (me == last ? 2 : 0) + 2048 * sizeof(float), 16, DataType::kFloat32,
                          ReduceOp::kSum, nullptr);
  });
  ASSERT_ALL(why.find("reduce_scatter: " + refused + "reduce_scatter: out is not aligned to its dtype") != std::string::npos,
             "got '" << why << "'");
  {
    SymmetricBuffer counts = comm().alloc(n * sizeof(int64_t));
    std::vector<int64_t> ones(n, 1);
    SYMMEM_CUDA_CHECK(cudaMemcpy(counts.ptr(), ones.data(), ones.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    why = attempt([&] {
      comm().all_to_all_v(buf.ptr(), static_cast<float*>(buf.ptr()) + 2048, n, me == last ? nullptr : static_cast<int64_t*>(counts.ptr()),
                          nullptr, DataType::kFloat32, nullptr);
    });
    ASSERT_ALL(why.find("all_to_all_v: " + refused + "all_to_all_v: send_counts is null") != std::string::npos, "got '" << why << "'");
    // all_to_all_v's outputs may differ (the last rank's plain, the others' symmetric, each at a
    // place of its own): accepted. Its input must lie at one place: refused where the last rank's
    // does not.
    DeviceBuffer plain(n * sizeof(float));
    why = attempt([&] {
      comm().all_to_all_v(buf.ptr(), me == last ? plain.p : static_cast<float*>(buf.ptr()) + 2048 + 8 * me, n,
                          static_cast<int64_t*>(counts.ptr()), nullptr, DataType::kFloat32, nullptr);
      ctx()->synchronize(nullptr, "all_to_all_v into outputs that differ");
    });
    ASSERT_ALL(why.empty(), "all_to_all_v into outputs that differ: " << why);
    why = attempt([&] {
      comm().all_to_all_v(static_cast<float*>(buf.ptr()) + (me == last ? 8 : 0), static_cast<float*>(buf.ptr()) + 2048, n,
                          static_cast<int64_t*>(counts.ptr()), nullptr, DataType::kFloat32, nullptr);
    });
    ASSERT_ALL(why.find("all_to_all_v: arguments differ across ranks (in") != std::string::npos, "got '" << why << "'");
    comm().free(counts);
  }
  why = attempt([&] {
    comm().all_reduce(buf.ptr(), buf.ptr(), 1024, DataType::kFloat32, ReduceOp::kSum, nullptr);
    ctx()->synchronize(nullptr, "all_reduce after the refusals");
  });
  ASSERT_ALL(why.empty(), "the all-reduce after the refusals: " << why);
  comm().free(buf);

  // Overlap: M unlike on the last rank, then the mode, then the call.
  {
    const int64_t rows = 256, k = 256, nc = 256, m = rows * n;
    overlap::TensorParallel tp(comm(), 2 * m, k, nc);
    void *a = nullptr, *b = nullptr, *c = nullptr;
    SYMMEM_CUDA_CHECK(cudaMalloc(&a, 2 * m * k * 2));
    SYMMEM_CUDA_CHECK(cudaMalloc(&b, k * nc * 2));
    SYMMEM_CUDA_CHECK(cudaMalloc(&c, 2 * m * nc * 2));
    why = attempt([&] { tp.all_gather_matmul(a, me == last ? 2 * m : m, k, b, nc, c, nullptr, nullptr, overlap::Mode::kSequential); });
    ASSERT_ALL(why.find("overlap::all_gather_matmul: arguments differ across ranks (m") != std::string::npos, "got '" << why << "'");
    why = attempt([&] {
      tp.matmul_reduce_scatter(a, m, k, b, nc, c, ReduceOp::kSum, nullptr, me == last ? overlap::Mode::kSequential : overlap::Mode::kOverlap);
    });
    ASSERT_ALL(why.find("overlap::matmul_reduce_scatter: arguments differ across ranks (mode") != std::string::npos, "got '" << why << "'");
    // The last rank makes the other overlapped GEMM, with the same shapes: named by its call.
    why = attempt([&] {
      if (me == last)
        tp.matmul_reduce_scatter(a, m, k, b, nc, c, ReduceOp::kSum, nullptr, overlap::Mode::kSequential);
      else
        tp.all_gather_matmul(a, m, k, b, nc, c, nullptr, nullptr, overlap::Mode::kSequential);
    });
    ASSERT_ALL(why.find("arguments differ across ranks (call") != std::string::npos && why.find("'call=all_gather_matmul m=") != std::string::npos &&
                   why.find("'call=matmul_reduce_scatter m=") != std::string::npos,
               "got '" << why << "'");
    // An argument only the last rank refuses (its checks of its own): raised on every rank.
    why = attempt([&] { tp.all_gather_matmul(a, m, k, b, nc, me == last ? nullptr : c, nullptr, nullptr, overlap::Mode::kSequential); });
    ASSERT_ALL(why.find("overlap::all_gather_matmul: rank " + std::to_string(last) + " refused: overlap::all_gather_matmul: c is null") !=
                   std::string::npos,
               "got '" << why << "'");
    why = attempt([&] {
      tp.all_gather_matmul(a, m, k, b, nc, c, nullptr, nullptr, overlap::Mode::kSequential);
      ctx()->synchronize(nullptr, "all_gather_matmul after the refusals");
    });
    ASSERT_ALL(why.empty(), "all_gather_matmul after the refusals: " << why);
    SYMMEM_CUDA_CHECK(cudaFree(a));
    SYMMEM_CUDA_CHECK(cudaFree(b));
    SYMMEM_CUDA_CHECK(cudaFree(c));
  }

  // MoE: the last rank combines where the others dispatch.
  {
    const moe::Config cfg{256, 4, 4 * n, 16, 0, false};
    moe::ExpertParallel ep(comm(), cfg);
    void *x = nullptr, *idx = nullptr, *recv = nullptr, *counts = nullptr, *y = nullptr;
    const size_t cap = static_cast<size_t>(n) * cfg.max_tokens;
    SYMMEM_CUDA_CHECK(cudaMalloc(&x, cfg.max_tokens * cfg.hidden * 2));
    SYMMEM_CUDA_CHECK(cudaMalloc(&idx, cfg.max_tokens * cfg.topk * 4));
    SYMMEM_CUDA_CHECK(cudaMemset(idx, 0xFF, cfg.max_tokens * cfg.topk * 4));  // -1: no expert
    SYMMEM_CUDA_CHECK(cudaMalloc(&recv, 4 * cap * cfg.hidden * 2));
    SYMMEM_CUDA_CHECK(cudaMalloc(&counts, 4 * sizeof(int)));
    SYMMEM_CUDA_CHECK(cudaMalloc(&y, cfg.max_tokens * cfg.hidden * 2));
    moe::DispatchIn in;
    in.x = x;
    in.topk_idx = idx;
    in.tokens = cfg.max_tokens;
    moe::DispatchOut out;
    out.recv_x = recv;
    out.expert_counts = static_cast<int*>(counts);
    why = attempt([&] {
      if (me == last) ep.combine(recv, y, true, nullptr);
      else ep.dispatch(in, out, nullptr);
    });
    ASSERT_ALL(why.find("arguments differ across ranks (call") != std::string::npos, "got '" << why << "'");
    moe::DispatchIn too_many = in;
    too_many.tokens = cfg.max_tokens + 1;
    why = attempt([&] { ep.dispatch(me == last ? too_many : in, out, nullptr); });
    ASSERT_ALL(why.find("moe dispatch: rank " + std::to_string(last) + " refused: moe dispatch: tokens=17") != std::string::npos,
               "got '" << why << "'");
    why = attempt([&] {
      ep.dispatch(in, out, nullptr);
      ep.combine(recv, y, true, nullptr);
      ctx()->synchronize(nullptr, "moe after the refusal");
    });
    ASSERT_ALL(why.empty(), "dispatch and combine after the refusal: " << why);
    for (void* p : {x, idx, recv, counts, y}) SYMMEM_CUDA_CHECK(cudaFree(p));
  }
}
