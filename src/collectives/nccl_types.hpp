#pragma once
// symmem's element types and reductions as NCCL's, and NCCL's gather and scatter (one mapping for
// the library and symmem-bench, which calls NCCL beside it). Private: NCCL stays out of the public
// headers.
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

/// ncclGather (gather) or ncclScatter where nccl.h has them (SYMMEM_NCCL_HAS_GATHER, from CMake;
/// NCCL 2.28), else the same through grouped sends and receives. `bytes`: one rank's chunk.
inline ncclResult_t nccl_rooted_move(bool gather, const void* in, void* out, size_t bytes, int root, ncclComm_t c, cudaStream_t s) {
#ifdef SYMMEM_NCCL_HAS_GATHER
  return gather ? ncclGather(in, out, bytes, ncclUint8, root, c, s) : ncclScatter(in, out, bytes, ncclUint8, root, c, s);
#else
  int n = 0, me = 0;
  ncclCommCount(c, &n);
  ncclCommUserRank(c, &me);
  ncclGroupStart();
  for (int p = 0; p < n && me == root; ++p) {  // the root's side: a receive (gather) or a send (scatter) a rank
    if (gather) ncclRecv(static_cast<char*>(out) + p * bytes, bytes, ncclUint8, p, c, s);
    else ncclSend(static_cast<const char*>(in) + p * bytes, bytes, ncclUint8, p, c, s);
  }
  if (gather) ncclSend(in, bytes, ncclUint8, root, c, s);
  else ncclRecv(out, bytes, ncclUint8, root, c, s);
  return ncclGroupEnd();
#endif
}

}  // namespace symmem::detail
