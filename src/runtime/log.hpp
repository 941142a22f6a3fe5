#pragma once
// Logging and Nsight ranges. SYMMEM_DEBUG=WARN|INFO|TRACE (default off) prints rank-prefixed lines
// on stderr: WARN what went wrong, INFO what was set up (team, table, NCCL, allocations), TRACE
// every call (the algorithm chosen and why) and every host rendezvous before it waits. NVTX ranges
// name every host API call in Nsight Systems (free when no tool is attached).
#include <string>

#include <nvtx3/nvToolsExt.h>

namespace symmem::detail {

enum class LogLevel : int { kOff = 0, kWarn, kInfo, kTrace };

/// The level SYMMEM_DEBUG sets (read once).
LogLevel log_level();
/// Parses a SYMMEM_DEBUG value; throws InvalidArgument for anything but the four names (or empty).
LogLevel parse_log_level(const char* text);
/// One line "[symmem rank R] LEVEL: msg" on stderr, written at once.
void log_line(LogLevel level, const std::string& msg);

/// A named range on the Nsight timeline for the life of the object.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace symmem::detail

/// Logs `expr` (a std::string expression, evaluated only when the level is on).
#define SYMMEM_LOG(level, expr)                                                                   \
  do {                                                                                            \
    if (::symmem::detail::log_level() >= ::symmem::detail::LogLevel::level)                       \
      ::symmem::detail::log_line(::symmem::detail::LogLevel::level, (expr));                      \
  } while (0)
