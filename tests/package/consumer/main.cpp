// Uses the installed headers (no NCCL header needed) and library, without a GPU.
#include <symmem/symmem.hpp>

#include <cstdio>

int main() {
  if (symmem::parse_dtype("bf16") != symmem::DataType::kBFloat16) return 1;
  if (symmem::env_vars().empty() || symmem::launch_help().find("symmem-run") == std::string::npos) return 2;
  try {
    symmem::parse_algo("warp_speed");
    return 3;
  } catch (const symmem::InvalidArgument&) {
  }
  std::printf("consumer ok: %zu environment variables documented\n", symmem::env_vars().size());
  return 0;
}
