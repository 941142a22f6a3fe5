#pragma once
// Internal: the overlap module's kernels.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "symmem/device/handle.hpp"
#include "symmem/export.hpp"
#include "symmem/types.hpp"

namespace symmem::overlap {
/// out = scale * sum over r < n of slots[r] (each `elems` of `dtype`, bf16 or fp16, contiguous;
/// 16-byte aligned), in fp32. (Exported for symmem-bench's overlap probe.)
SYMMEM_API void launch_sum_slots(const void* slots, size_t elems, int n, void* out, float scale, int sms, cudaStream_t s,
                                 DataType dtype = DataType::kBFloat16);
/// Ends a call that used `recv` (the TensorParallel's landing buffer; credits.cuh): zeroes its
/// signal slots [0, clear), counts the call in this rank's epoch and hands the peers their credits.
void launch_end_recv_call(const DeviceHandle& recv, int clear, cudaStream_t s);
}  // namespace symmem::overlap
