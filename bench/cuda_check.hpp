#pragma once
// CK(call): a CUDA runtime call whose failure ends the program, naming the call, the error and the
// line. For the programs that do not link symmem (the device probes in tools/, the peer programs in
// bench/peers/); symmem's own code throws (SYMMEM_CUDA_CHECK).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(2);                                                                               \
    }                                                                                             \
  } while (0)
