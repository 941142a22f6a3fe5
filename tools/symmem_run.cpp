// symmem-run: start one process per rank on this host with the environment torchrun would set.
#include <cstdio>
#include <string>
#include <vector>

#include "symmem/error.hpp"
#include "symmem/launcher.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc), program;
  try {
    symmem::LaunchOptions opt = symmem::parse_launch_args(args, &program);
    if (opt.help) {
      std::fputs(symmem::launch_help().c_str(), stdout);
      return 0;
    }
    if (opt.env) {
      std::fputs(symmem::env_help().c_str(), stdout);
      return 0;
    }
    return symmem::launch(opt, program);
  } catch (const symmem::Error& e) {
    std::fprintf(stderr, "symmem-run: %s\n", e.what());
    return 2;
  }
}
