#pragma once
// symmem's own launcher: one process per rank on this host, environment set as torchrun sets it.
#include <string>
#include <vector>

#include "symmem/export.hpp"

namespace symmem {

struct LaunchOptions {
  int nranks = 1;
  int ranks_per_gpu = 1;
  int port = 0;                // 0: pick a free port
  bool prefix_output = true;   // "[rank R] " before each line
  int kill_grace_ms = 3000;    // after the first failure: SIGTERM, then SIGKILL after this
};

/// Runs argv[0] with argv as nranks processes; returns the first non-zero exit status (a signal
/// becomes 128 + its number), or 0. The first failure ends the others.
SYMMEM_API int launch(const LaunchOptions& opt, const std::vector<std::string>& argv);

/// Parses `symmem-run` arguments: [-n N] [--ranks-per-gpu K] [--port P] [--no-prefix] program args...
/// Throws InvalidArgument with a usage line on bad input.
SYMMEM_API LaunchOptions parse_launch_args(const std::vector<std::string>& args, std::vector<std::string>* program);

/// True when this process was started by a launcher (RANK or OMPI_COMM_WORLD_RANK set).
SYMMEM_API bool launched();

}  // namespace symmem
