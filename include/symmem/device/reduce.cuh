#pragma once
// Element conversions and reductions on packed words: a 16-byte (or 8-byte) word of elements is
// unpacked to accumulators (fp32 for the 32-bit and narrower floating types, fp64 for float64, an
// integer type's own: sums and products wrap in its width, and an average divides the wrapped
// sum, as NCCL's), reduced, and packed back.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "symmem/types.hpp"

namespace symmem {
/// Calls f(std::integral_constant<DataType, D>) for the runtime dtype d (host code that launches a
/// kernel templated on the type). Returns false for a value outside the enum.
template <class F>
bool dispatch_dtype(DataType d, F&& f) {
  switch (d) {
#define SYMMEM_DTYPE_CASE(T) \
  case DataType::T: f(std::integral_constant<DataType, DataType::T>{}); return true;
    SYMMEM_DTYPE_CASE(kFloat32) SYMMEM_DTYPE_CASE(kFloat16) SYMMEM_DTYPE_CASE(kBFloat16) SYMMEM_DTYPE_CASE(kFp8E4M3)
    SYMMEM_DTYPE_CASE(kFp8E5M2) SYMMEM_DTYPE_CASE(kInt32) SYMMEM_DTYPE_CASE(kUInt8) SYMMEM_DTYPE_CASE(kInt8)
    SYMMEM_DTYPE_CASE(kUInt32) SYMMEM_DTYPE_CASE(kInt64) SYMMEM_DTYPE_CASE(kUInt64) SYMMEM_DTYPE_CASE(kFloat64)
#undef SYMMEM_DTYPE_CASE
  }
  return false;
}
}  // namespace symmem

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

/// Raw storage of each type, its accumulator, and the conversions.
template <DataType D> struct Elem;
template <> struct Elem<DataType::kFloat32> {
  using Raw = uint32_t; using Acc = float;
  __device__ static Acc load(Raw r) { return __uint_as_float(r); }
  __device__ static Raw store(Acc a) { return __float_as_uint(a); }
};
template <> struct Elem<DataType::kFloat16> {
  using Raw = uint16_t; using Acc = float;
  __device__ static Acc load(Raw r) { return __half2float(__ushort_as_half(r)); }
  __device__ static Raw store(Acc a) { return __half_as_ushort(__float2half_rn(a)); }
};
template <> struct Elem<DataType::kBFloat16> {
  using Raw = uint16_t; using Acc = float;
  __device__ static Acc load(Raw r) { return __uint_as_float(static_cast<uint32_t>(r) << 16); }
  __device__ static Raw store(Acc a) { return __bfloat16_as_ushort(__float2bfloat16_rn(a)); }
};
template <> struct Elem<DataType::kFp8E4M3> {
  using Raw = uint8_t; using Acc = float;
  __device__ static Acc load(Raw r) { return __half2float(__half(__nv_cvt_fp8_to_halfraw(r, __NV_E4M3))); }
  __device__ static Raw store(Acc a) { return __nv_cvt_float_to_fp8(a, __NV_SATFINITE, __NV_E4M3); }
};
template <> struct Elem<DataType::kFp8E5M2> {
  using Raw = uint8_t; using Acc = float;
  __device__ static Acc load(Raw r) { return __half2float(__half(__nv_cvt_fp8_to_halfraw(r, __NV_E5M2))); }
  __device__ static Raw store(Acc a) { return __nv_cvt_float_to_fp8(a, __NV_SATFINITE, __NV_E5M2); }
};
/// Integers: Raw is the stored bits, Acc the type they reduce in (stored back by truncation).
template <class RawT, class AccT, class ValueT = AccT> struct IntElem {
  using Raw = RawT; using Acc = AccT;
  __device__ static Acc load(Raw r) { return static_cast<Acc>(static_cast<ValueT>(r)); }
  __device__ static Raw store(Acc a) { return static_cast<Raw>(a); }
};
template <> struct Elem<DataType::kInt32> : IntElem<uint32_t, int32_t> {};
template <> struct Elem<DataType::kUInt32> : IntElem<uint32_t, uint32_t> {};
template <> struct Elem<DataType::kInt64> : IntElem<uint64_t, int64_t> {};
template <> struct Elem<DataType::kUInt64> : IntElem<uint64_t, uint64_t> {};
template <> struct Elem<DataType::kInt8> : IntElem<uint8_t, int8_t> {};
template <> struct Elem<DataType::kUInt8> : IntElem<uint8_t, uint8_t> {};
template <> struct Elem<DataType::kFloat64> {
  using Raw = uint64_t; using Acc = double;
  __device__ static Acc load(Raw r) { return __longlong_as_double(static_cast<long long>(r)); }
  __device__ static Raw store(Acc a) { return static_cast<uint64_t>(__double_as_longlong(a)); }
};

template <ReduceOp Op> struct Reduce {
  template <class A> __device__ static A apply(A a, A b) {
    if constexpr (Op == ReduceOp::kMax) return a > b ? a : b;
    else if constexpr (Op == ReduceOp::kMin) return a < b ? a : b;
    else if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) {  // (wrapping, in unsigned arithmetic)
      using U = std::make_unsigned_t<A>;
      return static_cast<A>(Op == ReduceOp::kProd ? static_cast<U>(a) * static_cast<U>(b) : static_cast<U>(a) + static_cast<U>(b));
    } else if constexpr (Op == ReduceOp::kProd) return a * b;
    else return a + b;  // sum, avg
  }
  /// The last step: avg divides by the number of ranks.
  template <class A> __device__ static A finish(A a, int nranks) {
    if constexpr (Op == ReduceOp::kAvg) return a / static_cast<A>(nranks);
    else return a;
  }
};

/// A word of W bytes holding W / sizeof(Raw) elements, unpacked to accumulators.
template <DataType D, class Word>
struct Pack {
  using E = Elem<D>;
  static_assert(sizeof(Word) % sizeof(typename E::Raw) == 0, "a word holds whole elements");
  static constexpr int kN = sizeof(Word) / sizeof(typename E::Raw);
  typename E::Acc v[kN];
  __device__ void load(const Word& w) {
    union { Word w; typename E::Raw r[kN]; } u;
    u.w = w;
#pragma unroll
    for (int i = 0; i < kN; ++i) v[i] = E::load(u.r[i]);
  }
  template <ReduceOp Op> __device__ void reduce(const Word& w) {
    union { Word w; typename E::Raw r[kN]; } u;
    u.w = w;
#pragma unroll
    for (int i = 0; i < kN; ++i) v[i] = Reduce<Op>::apply(v[i], E::load(u.r[i]));
  }
  template <ReduceOp Op> __device__ Word store(int nranks) const {
    union { Word w; typename E::Raw r[kN]; } u;
#pragma unroll
    for (int i = 0; i < kN; ++i) u.r[i] = E::store(Reduce<Op>::finish(v[i], nranks));
    return u.w;
  }
};

}  // namespace symmem::device
#endif
