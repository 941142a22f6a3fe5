#pragma once
// What the library's device code can do on this process's GPU. Device code tests __CUDA_ARCH__, so
// what a kernel holds (griddepcontrol for programmatic dependent launch, the bulk-copy unit) follows
// the architecture its code was generated for, not the GPU's compute capability: a build with only
// compute_80 code (CMAKE_CUDA_ARCHITECTURES=80) runs on an H100 through the driver's JIT with
// neither. Host code that chooses a launch by such a feature asks here.

namespace symmem::detail {

/// The architecture (800, 900, ...) of the library's code that the driver runs on the current GPU:
/// the PTX version it came from. 0 where the library has no code for the GPU. Every kernel of the
/// library (but the own Hopper GEMM, built for sm_90a alone and chosen by the GPU) is built for the
/// same architectures, so one kernel's answer is every kernel's. Cached on the first call (a
/// process drives one GPU).
int device_code_arch();

/// Whether the GPU has a feature of sm_90 (compute capability 9.0 or newer) and the library's code
/// for it was generated for sm_90 or newer: programmatic dependent launch, the bulk-copy unit.
bool device_code_has_sm90();

}  // namespace symmem::detail
