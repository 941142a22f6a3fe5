#pragma once
// Element types and reductions of the collectives.
#include <cstddef>
#include <string>

#include "symmem/export.hpp"

namespace symmem {

/// NCCL's element types (the codes are stable: new types go at the end).
enum class DataType : int {
  kFloat32 = 0, kFloat16, kBFloat16, kFp8E4M3, kFp8E5M2, kInt32, kUInt8, kInt8, kUInt32, kInt64, kUInt64, kFloat64
};
/// The last DataType (range checks of codes from other languages).
constexpr DataType kLastDataType = DataType::kFloat64;
/// sum, max, min, product, and average (sum / ranks). 16-bit and fp8 inputs reduce in fp32, float32
/// in fp32 and float64 in fp64; integers in their own width (sums and products wrap; an average is
/// the wrapped sum divided, truncated toward zero: NCCL's results, whichever path runs).
enum class ReduceOp : int { kSum = 0, kMax, kMin, kProd, kAvg };

SYMMEM_HOST_DEVICE constexpr size_t dtype_size(DataType t) {
  switch (t) {
    case DataType::kInt64: case DataType::kUInt64: case DataType::kFloat64: return 8;
    case DataType::kFloat32: case DataType::kInt32: case DataType::kUInt32: return 4;
    case DataType::kFloat16: case DataType::kBFloat16: return 2;
    default: return 1;
  }
}
/// True for the codes of a DataType (values cast from integers may be neither).
constexpr bool valid_dtype(DataType t) { return static_cast<int>(t) >= 0 && static_cast<int>(t) <= static_cast<int>(kLastDataType); }
SYMMEM_API const char* dtype_name(DataType t);
SYMMEM_API const char* redop_name(ReduceOp op);
/// Parses nccl-tests names (float, half, bfloat16, fp8_e4m3, fp8_e5m2, int32, uint8, int8, uint32,
/// int64, uint64, double and a few aliases); throws InvalidArgument listing the accepted names.
SYMMEM_API DataType parse_dtype(const std::string& s);
SYMMEM_API ReduceOp parse_redop(const std::string& s);
/// True for types reductions are defined on: every type (uint8 too, since session 77).
constexpr bool reducible(DataType t) { return valid_dtype(t); }

}  // namespace symmem
