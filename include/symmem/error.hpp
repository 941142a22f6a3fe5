#pragma once
// One error model: every host entry point throws a symmem::Error subclass whose message says
// what was wrong, on which rank, and what to do about it.
#include <atomic>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "symmem/export.hpp"

namespace symmem {

class SYMMEM_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};
/// A CUDA runtime or driver call failed.
class SYMMEM_API CudaError : public Error { using Error::Error; };
/// An operating-system call (socket, fork, fd passing) failed.
class SYMMEM_API SystemError : public Error { using Error::Error; };
/// An argument is invalid, or differs across ranks where it must match.
class SYMMEM_API InvalidArgument : public Error { using Error::Error; };
/// A bounded wait expired (a host rendezvous or a device-side signal wait).
class SYMMEM_API Timeout : public Error { using Error::Error; };
/// A peer rank left (its process exited or its connection closed).
class SYMMEM_API PeerLost : public Error { using Error::Error; };
/// The machine cannot run this (no GPU, no peer access, no VMM support).
class SYMMEM_API Unsupported : public Error { using Error::Error; };

namespace detail {
/// This process's rank for error messages (-1 before bootstrap). Atomic: every Bootstrap sets it,
/// and a process may hold several (ranks as threads in the host tests).
SYMMEM_API std::atomic<int>& error_rank();
/// "[symmem rank R] " prefix, or "[symmem] " before bootstrap.
SYMMEM_API std::string rank_prefix();
[[noreturn]] SYMMEM_API void throw_cuda(int code, const char* name, const char* desc, const char* expr,
                                        const char* file, int line);
[[noreturn]] SYMMEM_API void throw_system(const std::string& what, int err);
/// A message's parts: text as it is, numbers in decimal.
inline void append_part(std::string& s, const char* p) { s += p; }
inline void append_part(std::string& s, const std::string& p) { s += p; }
inline void append_part(std::string& s, char c) { s += c; }
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
inline void append_part(std::string& s, T v) { s += std::to_string(v); }
}  // namespace detail

template <class E = InvalidArgument>
[[noreturn]] inline void fail(const std::string& msg) { throw E(detail::rank_prefix() + msg); }

/// Checks an argument; throws InvalidArgument naming it.
inline void require(bool ok, const std::string& msg) {
  if (!ok) fail<InvalidArgument>(msg);
}
/// The same, the message written from its parts (strings, numbers) only when the check fails: no
/// allocation on a call's path where every argument is good.
template <class... Parts>
inline void require(bool ok, const char* first, const Parts&... rest) {
  if (ok) return;
  std::string msg(first);
  (detail::append_part(msg, rest), ...);
  fail<InvalidArgument>(msg);
}

}  // namespace symmem

/// Checks a CUDA runtime call; on failure throws symmem::CudaError with expression, file, line and rank.
#define SYMMEM_CUDA_CHECK(expr)                                                                   \
  do {                                                                                            \
    cudaError_t symmem_err_ = (expr);                                                             \
    if (symmem_err_ != cudaSuccess) {                                                             \
      (void)cudaGetLastError();                                                                   \
      ::symmem::detail::throw_cuda(static_cast<int>(symmem_err_), cudaGetErrorName(symmem_err_),  \
                                   cudaGetErrorString(symmem_err_), #expr, __FILE__, __LINE__);   \
    }                                                                                             \
  } while (0)
