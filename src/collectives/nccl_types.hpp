#pragma once
// symmem's element types and reductions as NCCL's (one mapping for the library and symmem-bench,
// which calls NCCL beside it). Private: NCCL stays out of the public headers.
#include <nccl.h>

#include "symmem/types.hpp"

namespace symmem::detail {

inline ncclDataType_t nccl_type(DataType d) {
  switch (d) {
    case DataType::kFloat32: return ncclFloat32;
    case DataType::kFloat16: return ncclFloat16;
    case DataType::kBFloat16: return ncclBfloat16;
    case DataType::kFp8E4M3: return ncclFloat8e4m3;
    case DataType::kFp8E5M2: return ncclFloat8e5m2;
    case DataType::kInt32: return ncclInt32;
    case DataType::kUInt8: return ncclUint8;
    case DataType::kInt8: return ncclInt8;
    case DataType::kUInt32: return ncclUint32;
    case DataType::kInt64: return ncclInt64;
    case DataType::kUInt64: return ncclUint64;
    case DataType::kFloat64: return ncclFloat64;
  }
  return ncclUint8;
}
inline ncclRedOp_t nccl_op(ReduceOp r) {
  switch (r) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kProd: return ncclProd;
    case ReduceOp::kAvg: return ncclAvg;
  }
  return ncclSum;
}

}  // namespace symmem::detail
