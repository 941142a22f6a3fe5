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
  bool help = false;           // --help: print launch_help() and exit
  bool env = false;            // --env: print env_help() and exit
};

/// Runs argv[0] with argv as nranks processes, each in its own process group (killed if the
/// launcher dies); returns the first non-zero exit status (a signal becomes 128 + its number), or
/// 0. The first failure, a SIGINT/SIGTERM/SIGHUP to the launcher or a closed output pipe ends
/// every rank's whole group; so does the end of the job, for anything a rank left running.
SYMMEM_API int launch(const LaunchOptions& opt, const std::vector<std::string>& argv);

/// Parses `symmem-run` arguments: [-n N] [--ranks-per-gpu K] [--port P] [--no-prefix] program args...
/// (or --help / --env alone). Throws InvalidArgument with a usage line on bad input.
SYMMEM_API LaunchOptions parse_launch_args(const std::vector<std::string>& args, std::vector<std::string>* program);

/// The text of `symmem-run --help`, and of `--env` (every variable symmem reads, with its default).
SYMMEM_API std::string launch_help();
SYMMEM_API std::string env_help();

/// True when this process was started by a launcher (RANK or OMPI_COMM_WORLD_RANK set).
SYMMEM_API bool launched();

}  // namespace symmem
