#pragma once
// The per-process context: bootstrap, the world team, this rank's GPU, and the record where device
// waits report timeouts.
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>

#include "symmem/bootstrap.hpp"
#include "symmem/device/handle.hpp"
#include "symmem/env.hpp"
#include "symmem/export.hpp"
#include "symmem/team.hpp"

namespace symmem {

class SYMMEM_API Context {
 public:
  /// Joins the job from the environment (torchrun, mpirun, symmem-run), selects this rank's GPU.
  static std::shared_ptr<Context> init();
  /// Selects this rank's GPU (config.device, or local_rank / ranks_per_gpu), with the settings of
  /// the environment (settings_from_env) or those given. Throws Unsupported when no GPU is
  /// visible, InvalidArgument when the rank maps past the visible GPUs or a setting is malformed.
  /// Collective: where any rank refuses, every rank throws (InvalidArgument naming that rank and
  /// why on the others), and so where SYMMEM_DEBUG_CHECKS differs across ranks (the checked calls
  /// exchange what the others would not).
  explicit Context(std::shared_ptr<Bootstrap> boot);
  Context(std::shared_ptr<Bootstrap> boot, Settings settings);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Team& world() const { return world_; }
  int rank() const { return world_.rank(); }
  int size() const { return world_.size(); }
  int device() const { return device_; }
  const Settings& settings() const { return settings_; }
  /// Device pointer of the error record (wait bound, abort flag, errors), for DeviceHandle.
  DeviceErrorRecord* device_error_record() const { return error_dev_; }
  unsigned long long timeout_ns() const { return static_cast<unsigned long long>(settings_.device_timeout_ms) * 1000000ull; }
  /// Sets the bound of every device wait: of waits already enqueued or running too (they read it
  /// from the context's record once they have spun a while).
  void set_device_timeout_ms(int ms);

  /// Throws if device code reported an error since the last reset: Timeout for an expired wait or
  /// an abort (the record stays: every later check throws again), InvalidArgument for a bad
  /// argument found on the GPU (reported once). `op` names the operation.
  void check(const std::string& op = "") const;
  /// Host-side failure (an NCCL call past its bound, an abort): every symmem wait of this process
  /// gives up at once, and check() throws Timeout with `why` from now on.
  void fail_waits(const std::string& why);
  /// Clears a reported error and the abort (tests; a new communicator after a failure).
  void reset_error();
  /// cudaStreamSynchronize, then check().
  void synchronize(cudaStream_t stream, const std::string& op = "") const;

 private:
  Context(std::shared_ptr<Bootstrap> boot, const Settings* given);
  void take_device();
  std::shared_ptr<Bootstrap> boot_;
  Team world_;
  Settings settings_;
  int device_ = -1;
  DeviceErrorRecord* error_host_ = nullptr;
  DeviceErrorRecord* error_dev_ = nullptr;
  unsigned int* error_claim_ = nullptr;  // device memory (DeviceErrorRecord::claim)
  mutable std::mutex host_error_mu_;
  std::string host_error_;
};

/// Formats a device timeout record as the message of symmem::Timeout.
SYMMEM_API std::string describe_device_error(const DeviceErrorRecord& rec);

}  // namespace symmem
