#pragma once
// Element types and reductions of the collectives.
#include <cstddef>
#include <string>

#include "symmem/export.hpp"

namespace symmem {

enum class DataType : int { kFloat32 = 0, kFloat16, kBFloat16, kFp8E4M3, kFp8E5M2, kInt32, kUInt8 };
/// sum, max, min, product, and average (sum / ranks). 16-bit and fp8 inputs reduce in fp32.
enum class ReduceOp : int { kSum = 0, kMax, kMin, kProd, kAvg };

SYMMEM_HOST_DEVICE constexpr size_t dtype_size(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kInt32 ? 4 : t == DataType::kFloat16 || t == DataType::kBFloat16 ? 2 : 1;
}
SYMMEM_API const char* dtype_name(DataType t);
SYMMEM_API const char* redop_name(ReduceOp op);
/// Parses nccl-tests names (float, half, bfloat16, fp8_e4m3, fp8_e5m2, int32, uint8 and a few
/// aliases); throws InvalidArgument listing the accepted names.
SYMMEM_API DataType parse_dtype(const std::string& s);
SYMMEM_API ReduceOp parse_redop(const std::string& s);
/// True for types reductions are defined on (every type but uint8).
constexpr bool reducible(DataType t) { return t != DataType::kUInt8; }

}  // namespace symmem
