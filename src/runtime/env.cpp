#include "symmem/env.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <sstream>

#include "symmem/error.hpp"

namespace symmem {

const std::vector<EnvVar>& env_vars() {
  static const std::vector<EnvVar> vars = {
      {"RANK", nullptr, "global rank (torchrun, symmem-run); OMPI_COMM_WORLD_RANK under mpirun"},
      {"WORLD_SIZE", nullptr, "number of ranks; OMPI_COMM_WORLD_SIZE under mpirun"},
      {"LOCAL_RANK", nullptr, "rank on this host; OMPI_COMM_WORLD_LOCAL_RANK under mpirun"},
      {"LOCAL_WORLD_SIZE", nullptr, "ranks on this host; OMPI_COMM_WORLD_LOCAL_SIZE under mpirun"},
      {"MASTER_ADDR", "127.0.0.1", "address of rank 0, which hosts the rendezvous store"},
      {"MASTER_PORT", nullptr, "TCP port of the rendezvous store (required when WORLD_SIZE > 1, "
                               "except under mpirun on one host)"},
      {"TORCHELASTIC_USE_AGENT_STORE", nullptr, "set by torchrun, whose agent then serves torch's store on MASTER_PORT: "
                                                "symmem's rendezvous takes a port derived from the job token and MASTER_PORT "
                                                "(Python's symmem.init() joins the agent's store instead)"},
      {"SYMMEM_RANKS_PER_GPU", "1", "ranks sharing one GPU; the GPU is LOCAL_RANK / this"},
      {"SYMMEM_DEVICE", nullptr, "explicit CUDA device index for this rank (overrides the above)"},
      {"SYMMEM_BOOTSTRAP_TIMEOUT_MS", "120000", "bound of every host rendezvous (store get, barrier)"},
      {"SYMMEM_JOB_TOKEN", nullptr, "token every connection to the rendezvous store presents (symmem-run sets a random "
                                    "one; else TORCHELASTIC_RUN_ID, the MPI job id, or MASTER_ADDR:MASTER_PORT:WORLD_SIZE)"},
      {"SYMMEM_BIND_ADDR", nullptr, "address rank 0's store listens on (default: what MASTER_ADDR resolves to; "
                                    "0.0.0.0 for every interface)"},
      {"SYMMEM_TIMEOUT_MS", "20000", "bound of every device-side wait (signals, barriers, collectives) and, through the watchdog, of NCCL calls; Context::set_device_timeout_ms changes it at run time"},
      {"SYMMEM_DEBUG", "OFF", "WARN, INFO or TRACE: rank-prefixed log lines on stderr (TRACE: every call, its algorithm "
                              "and why, and every host rendezvous before it waits)"},
      {"SYMMEM_DEBUG_CHECKS", "0", "1: compare the arguments ranks must pass alike (collectives; overlap M, K, Nc and mode; the order of MoE calls) across ranks on every call, and refuse a difference on every rank, naming it"},
      {"SYMMEM_HEAP_CHUNK_MB", "256", "the symmetric heap maps memory in arenas of this many MiB (a larger buffer gets its own); "
                                      "allocations that fit what is mapped take microseconds"},
      {"SYMMEM_TUNING_FILE", nullptr, "collective algorithm table written by `symmem-bench tune`"},
      {"SYMMEM_PDL", "1", "0: launch collective kernels without programmatic dependent launch"},
      {"SYMMEM_MOE_TRACE", "0", "1: MoE kernels stamp their phases (ExpertParallel::trace_ns; symmem-bench moe prints them)"},
      {"SYMMEM_GEMM_TUNE", "1", "0: overlap GEMMs take cuBLASLt's first heuristic choice instead of timing its candidates "
                                "at the first uncaptured call of each shape (in interleaved rounds; another replaces the first "
                                "only where 3% faster); "
                                "verbose: also print each tuned shape's candidates and times on stderr"},
      {"SYMMEM_BENCH_CLOCKS", "1", "symmem-bench overlap: 0 stops sampling each GPU's SM clock and power (NVML, read-only) beside "
                                   "the timed rounds; the rows then lack sm_mhz_* and power_w_*"},
      {"SYMMEM_BENCH_IDLE_US", "0", "symmem-bench: 0 to 100000, a spin of one GPU thread this long before each timed replay of "
                                    "the programs timed together (a lower duty cycle: under the power cap the clock then rises); symmem-hgemm-probe "
                                    "takes it too"},
      {"SYMMEM_BENCH_ORDER", "shuffle", "symmem-bench: the order of the programs timed together in each round, shuffle (drawn "
                                        "from the round's number, alike on every rank) or rotate (round r starts at program r: every "
                                        "program then always follows the same one, as before session 59)"},
      {"SYMMEM_BENCH_SWEEP", nullptr, "symmem-bench p2p: also sweep SM-put grid shapes at the largest size"},
      {"SYMMEM_BENCH_P2P_ORDER", nullptr, "symmem-bench p2p: also time every signal form against every wait form at the first size"},
      {"SYMMEM_MOE_SHAPES", nullptr, "symmem-bench moe: only these shapes (comma-separated names, e.g. decode,prefill)"},
      {"SYMMEM_MOE_SEND_SHARE", "75", "percent of a pipelined MoE round's blocks that send the next round while the rest finish this one "
                                      "(0: every block does both, one after the other), of the streamed dispatch's grid that sends "
                                      "(default 60 there, 65 at 2 ranks) and of the streamed combine's (default 75, 70 at 2 ranks); a rank-local choice"},
      {"SYMMEM_MOE_COMBINE_SHARE", nullptr, "percent of the streamed MoE combine's blocks that send partial rows (the rest sum "
                                            "this rank's tokens; default 75, 70 at 2 ranks); overrides SYMMEM_MOE_SEND_SHARE there; "
                                            "a rank-local choice"},
      {"SYMMEM_MOE_BACKOFF_NS", nullptr, "sleep between an MoE kernel's polls of its peers' flags (default: 200 for one kernel a round "
                                         "and for pipelined rounds, else 0; the streamed combine's summers at least 1000; a rank-local "
                                         "choice)"},
      {"SYMMEM_MOE_ROUND_TOKENS", "1024", "symmem-bench moe: tokens a round for the shapes with more tokens than that (prefill)"},
      {"SYMMEM_OVERLAP_GROUPS", nullptr, "0: all_gather_matmul runs one GEMM per peer's shard; 1: it groups shards that have "
                                         "landed at any size (default: where a shard's GEMM has 2^22 outputs or more; for comparisons; a "
                                         "rank-local choice)"},
      {"SYMMEM_OVERLAP_RS", nullptr, "ring or sum: matmul_reduce_scatter's overlap at 3 ranks and more as the ring that sums in "
                                     "the GEMMs or as GEMMs and a sum kernel (default: by shape; for comparisons; every rank must "
                                     "set the same)"},
      {"SYMMEM_OVERLAP_GEMM", nullptr, "own or cublas: all_gather_matmul's overlap as one persistent GEMM of symmem's own whose "
                                       "tiles wait for their shard (Hopper, a GPU to each rank, shards of a multiple of 256 rows) or "
                                       "as cuBLASLt's GEMMs a shard group at a time (default: own from 1024-row shards, at 2 ranks "
                                       "of 2^23 outputs, detail::gather_own_gemm); and matmul_reduce_scatter's fused form, one such "
                                       "GEMM over all rows whose row groups' copies start on its counts and whose own block adds the "
                                       "landed partials (default: where K >= 6144, and at 2 ranks where a rank has 4096+ rows; "
                                       "detail::reduce_own_gemm). Set it alike on every rank: "
                                       "TensorParallel's constructor refuses a mix"},
      {"SYMMEM_OVERLAP_GEMM_T", nullptr, "1 or 0: all_gather_matmul's own-GEMM form in transposed 160 x 128 tiles (hopper_gemm_t, "
                                         "ping-pong) or in 128 x 256 tiles (hopper_gemm) (default: by a model of the two walks, "
                                         "detail::gather_transposed: the transposed tiles at TP = 2 but for 70B M 8192; a "
                                         "rank-local choice)"},
      {"SYMMEM_OVERLAP_RS_GEMM_T", nullptr, "1 or 0: matmul_reduce_scatter's fused form (not the ring) in the transposed 160 x 128 "
                                            "tiles (hopper_gemm_t) or in 128 x 256 (hopper_gemm) (default: by the model of "
                                            "detail::reduce_transposed: the transposed tiles at TP = 2 but for 70B M 8192; a rank-local "
                                            "choice)"},
      {"SYMMEM_OVERLAP_GEMM_T_TALL", nullptr, "t >= 0: the transposed GEMM (hopper_gemm_t) runs each row shard as t tiles of 160 "
                                              "rows, then tiles of 128 (default: the count whose walk over the GPU's clusters is "
                                              "shortest, schedule::t_choose_tall; a rank-local choice)"},
      {"SYMMEM_OVERLAP_RS_STRADDLE", nullptr, "1 or 0: at 2 ranks matmul_reduce_scatter's fused form in transposed tiles lets one "
                                              "row of 160-row tiles straddle the two shards, where their rows leave 1-80 over whole "
                                              "tiles, or not (default: where the walk model says it is shorter, "
                                              "schedule::t_choose_straddle; a rank-local choice)"},
      {"SYMMEM_OVERLAP_RS_SUM_RING", nullptr, "1: matmul_reduce_scatter's fused form in transposed tiles adds the peers' partials "
                                              "through its GEMM's stage ring instead of through the summing warpgroup's own buffers "
                                              "(no straddle then; for measurements; a rank-local choice)"},
      {"SYMMEM_OVERLAP_OWN_RS", nullptr, "fused or ring: matmul_reduce_scatter's own-GEMM form wherever the own GEMM fits and "
                                         "SYMMEM_OVERLAP_GEMM is not cublas: the fused form (the own block adds every peer's "
                                         "partial) or its epilogue ring (every block but the first adds its predecessor's partial "
                                         "sum and travels on to the next rank; opt-in, not yet timed at 3+ ranks). Set it alike on "
                                         "every rank: TensorParallel's constructor refuses a mix"},
      {"SYMMEM_OVERLAP_OWN_SHARED", "0", "1: the own GEMM's forms (SYMMEM_OVERLAP_GEMM) run also where ranks share a GPU, for tests of "
                                         "their protocol on one GPU: each rank's persistent GEMM waits until the driver swaps its "
                                         "context for the rank it waits for (correct, many times slower; reliable at 2 ranks a GPU, at 4 its "
                                         "waits time out now and then), and leaves 4 SMs free for the copies. Set it alike on every rank"},
      {"SYMMEM_OVERLAP_RS_BARRIER", "0", "1: matmul_reduce_scatter's fused forms start with a barrier, as its other forms do, "
                                         "where by default only their GEMM's counts wait, for the peers' credits (for "
                                         "measurements). Set it alike on every rank"},
      {"SYMMEM_OVERLAP_COUNT_AT", nullptr, "the k-block of a tile's next tile at which matmul_reduce_scatter's fused form counts the "
                                           "tile's stores (default 3; for measurements; a rank-local choice)"},
      {"SYMMEM_OVERLAP_RS_RASTER", nullptr, "1 to 64: the raster (row tiles at a time) of matmul_reduce_scatter's fused forms' own "
                                            "GEMM (default: the transposed form's detail::reduce_raster, 8 where C has 8192 columns or "
                                            "more, else 2; hopper_gemm's fused and ring forms 2; for measurements; a rank-local choice)"},
      {"SYMMEM_OVERLAP_AG_RASTER", nullptr, "1 to 64: the raster (row tiles at a time) of all_gather_matmul's own GEMM (default 8, "
                                            "inside each peer's shard; for measurements; a rank-local choice)"},
      {"SYMMEM_OVERLAP_QUIET_NS", nullptr, "0 to 100000: the own GEMMs' signal waits poll relaxed this many ns apart and acquire once "
                                           "(default 0: acquire polls back to back; for measurements; a rank-local choice)"},
      {"SYMMEM_OVERLAP_DEFER", nullptr, "0, 1 or 2: of each own-GEMM tile's two halves, how many are stored under the next tile's "
                                        "first k-blocks (default 2; for measurements and tests; a rank-local choice)"},
      {"SYMMEM_OVERLAP_RS_CHUNKS", nullptr, "1 to 8: into how many parts (a copy and a signal each) matmul_reduce_scatter's cuBLASLt "
                                            "ring cuts each step's rows (default: detail::rs_chunks by K, 2 at the Llama-3 shapes; for "
                                            "measurements). Set it alike on every rank: TensorParallel's constructor refuses a mix"},
      {"SYMMEM_OVERLAP_ALT", nullptr, "symmem-bench overlap: own or cublas, a second TensorParallel made under that "
                                      "SYMMEM_OVERLAP_GEMM (or under a list VAR=value[;VAR=value...]), its overlap timed "
                                      "interleaved beside the first (column alt; the second instance's matmul_reduce_scatter "
                                      "reads slower at 70B: compare both ways round)"},
      {"SYMMEM_OVERLAP_TWINS", "1", "symmem-bench overlap: 1 to 4, each column's overlap timed on this many TensorParallel "
                                  "instances made alike, its figure their median (instances of one run read 1-3% apart)"},
      {"SYMMEM_OVERLAP_SPACER", "0", "symmem-bench overlap: 0 to 4 TensorParallel instances made before the timed ones and never "
                                   "run (does an instance's place in memory move its time?)"},
      {"SYMMEM_OVERLAP_ALT_FIRST", nullptr, "symmem-bench overlap: 1 makes SYMMEM_OVERLAP_ALT's TensorParallel before the main one"},
      {"SYMMEM_OVERLAP_DATA", "random", "symmem-bench overlap: the operands, random (bf16 in [-1, 1)), normal (mean 0, "
                                        "deviation 1: torch.randn's) or constant (0x3c3c, what sessions before 31 measured; GEMMs at "
                                        "the power cap run faster on it)"},
      {"SYMMEM_MOE_DATA", "constant", "symmem-bench moe: the rows and expert outputs, constant (one byte, zeros) or random "
                                      "(random bf16 bit patterns)"},
      {"SYMMEM_OVERLAP_PROBE_COPIES", "1", "symmem-bench overlap's probe: push the operation's bytes this many times over"},
      {"SYMMEM_OVERLAP_MODELS", nullptr, "symmem-bench overlap: only these models (8B, 70B)"},
      {"SYMMEM_OVERLAP_OPS", nullptr, "symmem-bench overlap: only these operations (ag, rs)"},
      {"SYMMEM_OVERLAP_M", nullptr, "symmem-bench overlap: only these M (comma-separated, e.g. 8192,16384)"},
      {"SYMMEM_OVERLAP_PROBE", nullptr, "symmem-bench overlap: also time the reduce-scatter's block and half GEMMs alone, "
                                        "with their cuBLASLt configurations, the ring's GEMMs back to back, and for both operations the "
                                        "full GEMM (cuBLASLt, symmem's own) with the operation's copies beside it, with and without "
                                        "the barrier"},
      {"SYMMEM_MOE_RING", nullptr, "0: an MoE dispatch and combine of several rounds run in rounds instead of as one streamed "
                                   "kernel each (rings per rank; the default where every rank has its own GPU); every rank must set "
                                   "the same"},
      {"SYMMEM_MOE_COMBINE_RING", nullptr, "0: after a streamed MoE dispatch, the combine runs in rounds instead of streamed; every "
                                           "rank must set the same"},
      {"SYMMEM_MOE_SENDER_CLAIMS", nullptr, "0: an MoE dispatch of one round leaves the claims of expert rows to the receive copy "
                                            "instead of the senders (default: the senders claim); every rank must set the same"},
      {"SYMMEM_MOE_LL", nullptr, "0: MoE rounds of a few tokens take the staged dispatch and combine too instead of the "
                                 "flag-in-data lines (for measurements); every rank must set the same"},
      {"SYMMEM_MOE_LL_TOKENS", "8", "1 to 32: MoE rounds of at most this many tokens a rank take the lines (for measurements); "
                                    "every rank must set the same"},
      {"SYMMEM_MOE_LL_WIDE", nullptr, "1 or 0: the lines' combine in wide or narrow lines whatever the round's size (default: "
                                      "by the size; for measurements); every rank must set the same"},
      {"SYMMEM_COMMIT", nullptr, "python -m symmem.bench and the peers' benchmarks (bench/peers): the commit their JSON names "
                                 "(else COMMIT, else git's)"},
      {"SYMMEM_KIND", nullptr, "the peers' benchmarks (bench/peers, run by tools/peers.sh): the device kind their JSON names"},
      {"SYMMEM_MOE_TUNE", "67", "MoE kernel variants as bits (1: the receive copy spread over every SM, 2: one election in the "
                                "one-kernel dispatch, 64: the streamed dispatch's copy by the bulk-copy unit, 128: its senders a "
                                "warp a token at any rank count), for measurements; a rank-local choice"},
  };
  return vars;
}

namespace detail {
void add_reason(std::string& why, const std::string& reason) { why += (why.empty() ? "" : "; ") + reason; }

long knob_number(std::string& why, const char* name, long lo, long hi, long unset) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return unset;
  try {
    return parse_int(v, name, lo, hi);
  } catch (const InvalidArgument& e) {
    add_reason(why, e.what());
    return unset;
  }
}

long parse_int(const char* text, const char* what, long lo, long hi) {
  if (text == nullptr || *text == '\0') fail("" + std::string(what) + " is empty; set it to an integer");
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0')
    fail(std::string(what) + "='" + text + "' is not an integer");
  if (v < lo || v > hi)
    fail(std::string(what) + "=" + text + " is out of range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "]");
  return v;
}

// Edits (insertions, deletions, substitutions) from a to b, counted up to 3.
static int edits(const std::string& a, const std::string& b) {
  if (a.size() > b.size() + 2 || b.size() > a.size() + 2) return 3;
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return std::min(row[b.size()], 3);
}

std::vector<std::pair<std::string, std::string>> misspelt_settings(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& n : names) {
    if (n.rfind("SYMMEM_", 0) != 0) continue;
    const char* best = nullptr;
    int best_edits = 3;
    bool known = false;
    for (const EnvVar& v : env_vars()) {
      if (n == v.name) known = true;
      const int e = edits(n, v.name);
      if (e < best_edits) best_edits = e, best = v.name;
    }
    if (!known && best != nullptr) out.emplace_back(n, best);
  }
  return out;
}

std::string differing_fields(const std::string& a, const std::string& b) {
  std::istringstream ia(a), ib(b);
  std::string fa, fb, names;
  while (true) {
    const bool more_a = static_cast<bool>(ia >> fa), more_b = static_cast<bool>(ib >> fb);
    if (!more_a && !more_b) break;
    if (more_a && more_b && fa == fb) continue;
    const std::string& f = more_a ? fa : fb;
    names += (names.empty() ? "" : ", ") + f.substr(0, f.find('='));
  }
  return names;
}
}  // namespace detail

namespace {
EnvGetter or_getenv(const EnvGetter& get) {
  return get ? get : EnvGetter([](const char* n) -> const char* { return std::getenv(n); });
}
const char* first(const EnvGetter& get, std::initializer_list<const char*> names, const char** which) {
  for (const char* n : names)
    if (const char* v = get(n)) { *which = n; return v; }
  return nullptr;
}
// A port in [20000, 40000) from a key every rank of the job shares (FNV-1a: the same in every
// build, unlike std::hash, so ranks built apart still agree).
int derived_port(const std::string& key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ull;
  return 20000 + static_cast<int>(h % 20000);
}
}  // namespace

int bootstrap_timeout_ms_from_env(const EnvGetter& getter) {
  const char* t = or_getenv(getter)("SYMMEM_BOOTSTRAP_TIMEOUT_MS");
  return t ? static_cast<int>(detail::parse_int(t, "SYMMEM_BOOTSTRAP_TIMEOUT_MS", 1, 86400000)) : BootstrapConfig{}.timeout_ms;
}

BootstrapConfig bootstrap_config_from_env(const EnvGetter& getter) {
  EnvGetter get = or_getenv(getter);
  using detail::parse_int;
  BootstrapConfig c;
  const char* which = nullptr;
  const char* rank = first(get, {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}, &which);
  const char* which_size = nullptr;
  const char* size = first(get, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, &which_size);
  const bool mpi = which != nullptr && std::string(which) != "RANK";
  if (rank == nullptr && size == nullptr) return c;  // a single process: rank 0 of 1
  if (rank == nullptr) fail(std::string(which_size) + " is set but RANK is not: set both, or launch with symmem-run/torchrun");
  if (size == nullptr) fail(std::string(which) + " is set but WORLD_SIZE is not: set both, or launch with symmem-run/torchrun");
  c.world_size = static_cast<int>(parse_int(size, which_size, 1, 1 << 20));
  c.rank = static_cast<int>(parse_int(rank, which, 0, c.world_size - 1));

  const char* wl = nullptr;
  const char* lr = first(get, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}, &wl);
  c.local_rank = lr ? static_cast<int>(parse_int(lr, wl, 0, c.world_size - 1)) : c.rank;
  const char* wls = nullptr;
  const char* ls = first(get, {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}, &wls);
  c.local_world_size = ls ? static_cast<int>(parse_int(ls, wls, 1, c.world_size)) : c.world_size;
  if (c.local_rank >= c.local_world_size)
    fail("LOCAL_RANK=" + std::to_string(c.local_rank) + " is not below LOCAL_WORLD_SIZE=" +
         std::to_string(c.local_world_size));

  if (const char* a = get("MASTER_ADDR")) c.master_addr = a;
  if (const char* p = get("MASTER_PORT")) {
    c.master_port = static_cast<int>(parse_int(p, "MASTER_PORT", 1, 65535));
  } else if (c.world_size > 1) {
    const char* job = mpi ? first(get, {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "PMI_JOBID"}, &which) : nullptr;
    if (job == nullptr || c.local_world_size != c.world_size)
      fail("MASTER_PORT is not set: set MASTER_ADDR and MASTER_PORT (the TCP rendezvous of rank 0), "
           "or launch with symmem-run or torchrun");
    // mpirun on one host: derive a port from the job id so every rank picks the same one.
    c.master_port = derived_port(job);
  }
  c.timeout_ms = bootstrap_timeout_ms_from_env(get);
  if (const char* k = get("SYMMEM_RANKS_PER_GPU"))
    c.ranks_per_gpu = static_cast<int>(parse_int(k, "SYMMEM_RANKS_PER_GPU", 1, 1024));
  if (const char* d = get("SYMMEM_DEVICE")) c.device = static_cast<int>(parse_int(d, "SYMMEM_DEVICE", 0, 1023));
  const char* tw = nullptr;
  if (const char* t = first(get, {"SYMMEM_JOB_TOKEN", "TORCHELASTIC_RUN_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}, &tw))
    c.job_token = std::string(tw) + "=" + t;
  if (const char* b = get("SYMMEM_BIND_ADDR")) c.bind_addr = b;
  // torchrun (PyTorch 2.x) starts its agent's store on MASTER_PORT before the workers and tells them
  // so: rank 0 could not listen there. Every rank has the same run id and MASTER_PORT, so every rank
  // derives the same port from them.
  const char* a = get("TORCHELASTIC_USE_AGENT_STORE");
  const std::string agent = a ? a : "";
  if (c.master_port > 0 && (agent == "True" || agent == "true" || agent == "1")) {
    c.agent_port = c.master_port;
    c.master_port = derived_port(c.job_token + "@" + std::to_string(c.agent_port));
    if (c.master_port == c.agent_port) c.master_port = 20000 + (c.master_port - 20000 + 1) % 20000;
  }
  return c;
}

Settings settings_from_env(const EnvGetter& getter) {
  EnvGetter get = or_getenv(getter);
  Settings s;
  if (const char* t = get("SYMMEM_TIMEOUT_MS"))
    s.device_timeout_ms = static_cast<int>(detail::parse_int(t, "SYMMEM_TIMEOUT_MS", 1, 86400000));
  if (const char* d = get("SYMMEM_DEBUG_CHECKS"))
    s.debug_checks = detail::parse_int(d, "SYMMEM_DEBUG_CHECKS", 0, 1) == 1;
  if (const char* f = get("SYMMEM_TUNING_FILE")) s.tuning_file = f;
  if (const char* c = get("SYMMEM_HEAP_CHUNK_MB"))
    s.heap_chunk_bytes = static_cast<size_t>(detail::parse_int(c, "SYMMEM_HEAP_CHUNK_MB", 2, 1 << 20)) << 20;
  return s;
}

}  // namespace symmem
