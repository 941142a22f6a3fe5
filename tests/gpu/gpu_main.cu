// Entry point of the GPU tests: skips (exit 77) with a message where the GPUs are missing, else
// builds one context and heap and runs the tests on every rank in the same order.
#include <cstdio>
#include <cstdlib>

#include "gpu_env.hpp"

namespace symmem::test {
std::shared_ptr<Context>& ctx() {
  static std::shared_ptr<Context> c;
  return c;
}
static std::unique_ptr<Heap> g_heap;
Heap& heap() { return *g_heap; }
static std::unique_ptr<Communicator> g_comm;
Communicator& comm() {
  if (!g_comm) g_comm = std::make_unique<Communicator>(ctx());
  return *g_comm;
}
}  // namespace symmem::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess || n == 0) {
    std::printf("SKIPPED: no CUDA GPU visible (%s); the gpu and multigpu tests run on a GPU machine\n",
                rc == cudaSuccess ? "0 devices" : cudaGetErrorString(rc));
    return 77;
  }
  try {
    symmem::BootstrapConfig cfg = symmem::bootstrap_config_from_env();
    int need = (cfg.local_world_size + cfg.ranks_per_gpu - 1) / cfg.ranks_per_gpu;
    if (need > n) {
      std::printf("SKIPPED: %d ranks at %d per GPU need %d GPUs; %d visible\n", cfg.local_world_size, cfg.ranks_per_gpu, need, n);
      return 77;
    }
    symmem::test::ctx() = std::make_shared<symmem::Context>(std::make_shared<symmem::Bootstrap>(cfg));
    symmem::test::g_heap = std::make_unique<symmem::Heap>(symmem::test::ctx());
  } catch (const symmem::Error& e) {
    std::printf("setup failed: %s\n", e.what());
    return 1;
  }
  int result = RUN_ALL_TESTS();
  symmem::test::g_comm.reset();
  symmem::test::g_heap.reset();
  symmem::test::ctx().reset();
  return result;
}
