#pragma once
// Every environment variable symmem reads is declared here once, with its default and meaning.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "symmem/export.hpp"

namespace symmem {

struct EnvVar {
  const char* name;
  const char* default_value;  // nullptr: no default (required where used, or unset)
  const char* doc;
};

/// The full list, for `symmem-run --env` and the README.
SYMMEM_API const std::vector<EnvVar>& env_vars();

/// How this process joins the job: from torchrun, mpirun, symmem-run, or explicit values.
struct BootstrapConfig {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;           // 0 only valid for world_size 1
  int timeout_ms = 120000;       // every host rendezvous is bounded by this
  int ranks_per_gpu = 1;         // several ranks may share one GPU (tests)
  int device = -1;               // -1: local_rank / ranks_per_gpu
  std::string job_token;         // a connection to the store must present it ("": derived from
                                 // master_addr, master_port and world_size)
  std::string bind_addr;         // where rank 0's store listens ("": master_addr)
  int agent_port = 0;            // torchrun's agent serves torch's own store on this port (MASTER_PORT,
                                 // TORCHELASTIC_USE_AGENT_STORE): master_port is then one derived from the
                                 // job, and Python's symmem.init() joins the agent's store instead
};

/// Runtime settings read once per process.
struct Settings {
  int device_timeout_ms = 20000;   // bound of every device-side wait
  bool debug_checks = false;       // cross-rank argument checks through the store on every call
  std::string tuning_file;         // collective algorithm table (empty: built-in)
  size_t heap_chunk_bytes = size_t(256) << 20;  // the heap maps memory in arenas of this size (member 0's counts)
};

using EnvGetter = std::function<const char*(const char*)>;

/// Reads the bootstrap from an environment (getenv by default). Throws InvalidArgument naming the
/// variable that is missing or malformed.
SYMMEM_API BootstrapConfig bootstrap_config_from_env(const EnvGetter& get = nullptr);
SYMMEM_API Settings settings_from_env(const EnvGetter& get = nullptr);
/// The bound of every host rendezvous: SYMMEM_BOOTSTRAP_TIMEOUT_MS, else BootstrapConfig's default
/// (also for a bootstrap through an existing store).
SYMMEM_API int bootstrap_timeout_ms_from_env(const EnvGetter& get = nullptr);

namespace detail {
/// Parses a decimal integer in [lo, hi]; throws InvalidArgument naming `what` otherwise.
SYMMEM_API long parse_int(const char* text, const char* what, long lo, long hi);
/// Adds `reason` to a refusal being built ("; "-separated), the `why` a constructor then raises on
/// every rank (Team::require_same).
SYMMEM_API void add_reason(std::string& why, const std::string& reason);
/// A numeric knob: the environment variable `name` in [lo, hi], or `unset` where it is unset or
/// empty. A malformed or out-of-range value is added to `why` ("; "-separated: the refusal a
/// constructor then raises on every rank) and reads as unset.
SYMMEM_API long knob_number(std::string& why, const char* name, long lo, long hi, long unset);
/// Two ranks' settings written as space-separated "name=value" fields in one order: the names of
/// the fields whose values differ, comma-separated ("" where none do), so that an error can say
/// which setting to make alike.
SYMMEM_API std::string differing_fields(const std::string& a, const std::string& b);
/// Of the variable names given (the environment's), those that start with SYMMEM_, are no symmem
/// setting (env_vars()) and are one or two edits from one: each with the setting nearest it. Such a
/// misspelt setting would otherwise be ignored without a word.
SYMMEM_API std::vector<std::pair<std::string, std::string>> misspelt_settings(const std::vector<std::string>& names);
}  // namespace detail

}  // namespace symmem
