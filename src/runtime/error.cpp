#include "symmem/error.hpp"

#include <cstring>

namespace symmem::detail {

std::atomic<int>& error_rank() {
  static std::atomic<int> rank{-1};
  return rank;
}

std::string rank_prefix() {
  int r = error_rank();
  return r < 0 ? std::string("[symmem] ") : "[symmem rank " + std::to_string(r) + "] ";
}

void throw_cuda(int code, const char* name, const char* desc, const char* expr, const char* file,
                int line) {
  std::string msg = rank_prefix() + "CUDA call failed: " + expr + " returned " + name + " (" +
                    std::to_string(code) + ": " + desc + ") at " + file + ":" + std::to_string(line);
  if (code == 100 /*cudaErrorNoDevice*/ || code == 35 /*cudaErrorInsufficientDriver*/)
    msg += ". No usable GPU: run on a machine with an NVIDIA GPU and driver.";
  throw CudaError(msg);
}

void throw_system(const std::string& what, int err) {
  throw SystemError(rank_prefix() + what + ": " + std::strerror(err) + " (errno " +
                    std::to_string(err) + ")");
}

}  // namespace symmem::detail
