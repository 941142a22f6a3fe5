#pragma once
// Internal: the overlap module's kernels.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "symmem/export.hpp"

namespace symmem::overlap {
/// out = scale * sum over r < n of slots[r] (each `elems` bf16, contiguous; 16-byte aligned).
/// (Exported for symmem-bench's overlap probe.)
SYMMEM_API void launch_sum_slots(const void* slots, size_t elems, int n, void* out, float scale, int sms, cudaStream_t s);
}  // namespace symmem::overlap
