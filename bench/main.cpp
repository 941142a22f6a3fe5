// symmem-bench: symmem beside NCCL, in one run, in the nccl-tests format.
//   symmem-bench                 the main suite on every GPU of this host (launches itself)
//   symmem-bench p2p [flags]     one suite; under symmem-run/torchrun/mpirun it runs as launched
// Flags as nccl-tests: -b MIN -e MAX -f FACTOR -n ITERS -w WARMUP -d DTYPE -o OP -c CHECK; plus
// --json FILE, --svg FILE, --kind DEVICE_KIND, --replays N, --commit SHA.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "symmem/env.hpp"

using namespace symmem;
using namespace symmem::bench;

static size_t parse_size(const std::string& s) {
  size_t mult = 1;
  std::string t = s;
  char u = t.empty() ? 0 : static_cast<char>(toupper(t.back()));
  if (u == 'K' || u == 'M' || u == 'G') {
    mult = u == 'K' ? 1024 : u == 'M' ? 1024 * 1024 : size_t(1) << 30;
    t.pop_back();
  }
  return static_cast<size_t>(detail::parse_int(t.c_str(), ("size '" + s + "'").c_str(), 1, 1L << 40)) * mult;
}

static const char* kUsage =
    "usage: symmem-bench [all|p2p|collectives|tune|moe|overlap|all_reduce|all_gather|reduce_scatter|broadcast|all_to_all|all_to_all_v|\n"
    "                     reduce|gather|scatter]\n"
    "                    [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-d DTYPE] [-o REDOP]\n"
    "                    [--replays N] [--json FILE] [--svg FILE] [--kind DEVICE_KIND] [--commit SHA] [--table FILE]";

// The JSON and plot a suite writes: --json (default symmem-bench-<suite>.json) and --svg (default
// the JSON's path with .svg for its extension).
static std::pair<std::string, std::string> output_paths(const Options& o, const std::string& suite) {
  const std::string json = o.json.empty() ? "symmem-bench-" + suite + ".json" : o.json;
  const size_t slash = json.rfind('/'), dot = json.rfind('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  return {json, o.svg.empty() ? (has_ext ? json.substr(0, dot) : json) + ".svg" : o.svg};
}

// Refuses, before anything runs, an output whose directory is missing or not writable (found out
// after a whole run before).
static void check_writable(const std::string& path, const char* what) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  require(access(dir.c_str(), W_OK) == 0, what, " '", path, "': its directory '", dir, "' is missing or not writable");
}

// The fastest algorithm per size, measured in this run, as a table SYMMEM_TUNING_FILE loads.
static void write_table(Harness& h, const TuningTable& t, const std::string& path) {
  if (h.rank() != 0) return;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) fail("cannot write the tuning table '" + path + "'");
  std::fprintf(f, "# measured by symmem-bench on %d x %s, commit %s\n", h.size(), h.gpu_name().c_str(), h.opt().commit.c_str());
  std::fputs(t.to_text().c_str(), f);
  std::fclose(f);
  std::printf("# wrote %s: use it with SYMMEM_TUNING_FILE=%s\n", path.c_str(), path.c_str());
}

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  std::string suite = "all";
  std::string table_path;  // tune: symmem-tuning.txt unless --table names one; all/collectives: only with --table
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= args.size()) fail(a + " needs a value\n" + kUsage);
        return args[++i];
      };
      if (a == "-b") o.min_bytes = parse_size(next());
      else if (a == "-e") o.max_bytes = parse_size(next());
      else if (a == "-f") o.factor = parse_size(next());
      else if (a == "-n") o.iters = static_cast<int>(detail::parse_int(next().c_str(), "-n", 1, 100000));
      else if (a == "-w") o.warmup = static_cast<int>(detail::parse_int(next().c_str(), "-w", 0, 100000));
      else if (a == "-c") o.check = detail::parse_int(next().c_str(), "-c", 0, 1) == 1;
      else if (a == "-d") o.dtype = next();
      else if (a == "-o") o.redop = next();
      else if (a == "--replays") o.replays = static_cast<int>(detail::parse_int(next().c_str(), "--replays", 1, 100000));
      else if (a == "--json") o.json = next();
      else if (a == "--svg") o.svg = next();
      else if (a == "--kind") o.device_kind = next();
      else if (a == "--commit") o.commit = next();
      else if (a == "-h" || a == "--help") { std::puts(kUsage); return 0; }
      else if (a == "p2p" || a == "all" || a == "tune" || a == "collectives" || a == "moe" || a == "overlap") suite = a;
      else if (a == "all_reduce" || a == "reduce_scatter" || a == "all_gather" || a == "broadcast" || a == "all_to_all" ||
               a == "all_to_all_v" || a == "reduce" || a == "gather" || a == "scatter") suite = a;
      else if (a == "--table") table_path = next();
      else fail("unknown argument '" + a + "'\n" + kUsage);
    }
    require(o.min_bytes <= o.max_bytes, "-b must not exceed -e");
    // Refused here, on any machine, not on every rank once the GPUs are set up (a bad -d or -o used
    // to surface only when the first collective ran, after the p2p suite).
    (void)parse_dtype(o.dtype);
    (void)parse_redop(o.redop);
    const auto paths = output_paths(o, suite);
    check_writable(paths.first, "--json");
    check_writable(paths.second, "--svg");
    if (suite == "tune" || !table_path.empty()) check_writable(table_path.empty() ? "symmem-tuning.txt" : table_path, "--table");
  } catch (const Error& e) {
    std::fprintf(stderr, "symmem-bench: %s\n", e.what());
    return 2;
  }

  if (!launched()) {
    // Not started by a launcher: start one rank per GPU of this host.
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n == 0) {
      std::fprintf(stderr, "symmem-bench: no CUDA GPU found (%s). It compares symmem with NCCL across the GPUs of one "
                           "host: run it on a machine with 2 or more NVIDIA GPUs.\n",
                   rc == cudaSuccess ? "0 devices" : cudaGetErrorString(rc));
      return 3;
    }
    if (n < 2) {
      std::fprintf(stderr, "symmem-bench: 1 GPU found; the benchmark compares GPU-to-GPU paths and needs 2 or more.\n");
      return 3;
    }
    LaunchOptions lo;
    lo.nranks = n;
    lo.prefix_output = false;
    char self[4096];
    ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[k > 0 ? k : 0] = 0;
    std::vector<std::string> cmd = {self};
    cmd.insert(cmd.end(), args.begin(), args.end());
    std::fprintf(stderr, "symmem-bench: launching %d ranks, one per GPU\n", n);
    return launch(lo, cmd);
  }

  try {
    Harness h(o);
    const std::vector<CollOp> colls = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast,
                                       CollOp::kAllToAll, CollOp::kAllToAllV, CollOp::kReduce, CollOp::kGather, CollOp::kScatter};
    if (suite == "p2p" || suite == "all") run_p2p(h);
    if (suite == "all" || suite == "collectives") {
      Options co = o;
      if (suite == "all" && o.min_bytes == 8) co.min_bytes = 1024, co.factor = 4;  // collectives: 1 KiB .. -e by 4
      const Options saved = h.opt();
      h.set_opt(co);
      TuningTable t;
      for (CollOp op : colls) run_collective(h, op, &t);
      h.set_opt(saved);
      if (!table_path.empty()) write_table(h, t, table_path);
      if (h.rank() == 0)
        std::printf("# the fastest method by size on this machine (%d x %s, %s %s, graph replays; nccl where NCCL on plain "
                    "buffers was faster):\n%s# (symmem's built-in table was measured on H100/H200: symmem-bench tune writes "
                    "this machine's, used with SYMMEM_TUNING_FILE)\n",
                    h.size(), h.gpu_name().c_str(), co.dtype.c_str(), co.redop.c_str(), fastest_by_size(t).c_str());
    } else if (suite == "tune") {
      TuningTable t;
      for (CollOp op : colls) run_collective(h, op, &t);
      write_table(h, t, table_path.empty() ? "symmem-tuning.txt" : table_path);
    } else if (suite == "moe") {
      run_moe(h);
    } else if (suite == "overlap") {
      run_overlap(h);
    } else if (suite != "p2p" && suite != "all") {
      run_collective(h, parse_coll(suite));
    }
    if (h.rank() == 0) {
      const auto [json, svg] = output_paths(o, suite);
      write_json(h, suite, json);
      if (write_svg(h.rows(), "symmem vs NCCL (" + suite + "), " + std::to_string(h.size()) + " x " + h.gpu_name(), svg))
        std::printf("# wrote %s and %s\n", json.c_str(), svg.c_str());
      else
        std::printf("# wrote %s (no plot: nothing timed)\n", json.c_str());
    }
    long wrong = 0;
    for (const Row& r : h.rows()) wrong += r.wrong;
    return wrong == 0 ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "symmem-bench: %s\n", e.what());
    return 1;
  }
}
