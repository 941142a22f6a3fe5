#include "log.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "symmem/error.hpp"

namespace symmem::detail {

LogLevel parse_log_level(const char* t) {
  if (t == nullptr || *t == '\0' || std::strcmp(t, "OFF") == 0 || std::strcmp(t, "0") == 0) return LogLevel::kOff;
  if (std::strcmp(t, "WARN") == 0) return LogLevel::kWarn;
  if (std::strcmp(t, "INFO") == 0) return LogLevel::kInfo;
  if (std::strcmp(t, "TRACE") == 0) return LogLevel::kTrace;
  fail(std::string("SYMMEM_DEBUG='") + t + "' is not a log level; use WARN, INFO or TRACE");
}

LogLevel log_level() {
  static const LogLevel level = [] {
    try {
      return parse_log_level(std::getenv("SYMMEM_DEBUG"));
    } catch (const Error& e) {
      log_line(LogLevel::kWarn, e.what());
      return LogLevel::kWarn;
    }
  }();
  return level;
}

void log_line(LogLevel level, const std::string& msg) {
  static const char* names[] = {"", "WARN", "INFO", "TRACE"};
  const std::string line = rank_prefix() + names[static_cast<int>(level)] + ": " + msg + "\n";
  (void)!write(2, line.data(), line.size());
}

}  // namespace symmem::detail
