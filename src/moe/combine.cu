// MoE combine, one round (moe_kernels.hpp). Send: a warp per row this rank received in the same
// round of the last dispatch sums, in fp32, the outputs of the local experts the row went to
// (weighted by the token's top-k weights, or not), and stores the bf16 result into the source
// rank's combine area at the token's index in the round; the grid's last block then raises every
// peer's combine flag. Receive: once every peer's flag has arrived, a warp per token of this rank
// in the round sums, in fp32, the partial rows of the ranks its experts live on (the destination
// mask dispatch recorded) into out.
#include <cuda_bf16.h>

#include "moe_common.cuh"
#include "symmem/error.hpp"

namespace symmem::moe::kern {
namespace {

__device__ __forceinline__ void add_bf16x8(float (&acc)[8], int4 v, float w) {
  const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(p[i]);
    acc[2 * i] += w * f.x;
    acc[2 * i + 1] += w * f.y;
  }
}
__device__ __forceinline__ int4 pack_bf16x8(const float (&acc)[8]) {
  int4 v;
  __nv_bfloat162* p = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) p[i] = __floats2bfloat162_rn(acc[2 * i], acc[2 * i + 1]);
  return v;
}

__global__ void __launch_bounds__(kThreads) combine_send_kernel(CombineArgs a) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, me = h.rank, C = L.capacity;
  const uint64_t c = h.local_signals[kCombineEpochSlot] + 1;  // this round's
  const uint64_t op = h.local_signals[kOpSlot];                // the last dispatch's
  const int parity = static_cast<int>(c & 1), opar = static_cast<int>(op & 1);
  // A second combine of one dispatch would read routing records the next dispatch may be
  // rewriting: it moves nothing and is reported (once, on this rank); its flags still go out, so
  // no peer waits for them.
  const bool refuse = h.local_signals[kCombinedSlot] >= op;  // (set by the last round of a finished combine)
  if (refuse && blockIdx.x == 0 && threadIdx.x == 0)
    device::record_error(h, WaitKind::kMoe, -1, 3ull << 32, Cmp::kGt, op, h.local_signals[kCombinedSlot], 0);
  // This round's rows from each source, and where they start among the operation's records.
  const unsigned* round_counts = at<unsigned>(h, L.round_counts_off);
  __shared__ int start[pad::kMaxTeam + 1], base[pad::kMaxTeam];
  if (threadIdx.x == 0) {
    start[0] = 0;
    for (int s = 0; s < n; ++s) {
      int b = 0;
      for (int j = 0; j < a.r.index; ++j) b += static_cast<int>(round_counts[static_cast<size_t>(j) * n + s]);
      base[s] = b;
      start[s + 1] = start[s] + static_cast<int>(round_counts[static_cast<size_t>(a.r.index) * n + s]);
    }
  }
  __syncthreads();
  const size_t hrow = static_cast<size_t>(L.hidden) * 2;  // bf16 row
  const int chunks = L.hidden / 8;                        // 16 bytes each
  for (int j = warp_global(); !refuse && j < start[n]; j += warps_total()) {
    int s = 0;
    while (start[s + 1] <= j) ++s;
    const size_t rec = (static_cast<size_t>(opar) * n + s) * L.max_tokens + base[s] + (j - start[s]);
    const Meta* meta = at<Meta>(h, L.meta_off + rec * sizeof(Meta));
    const int token = meta->src_token - a.r.index * L.round;  // in [0, round): the source sent it in this round
    int4* dst = at_peer<int4>(h, s, L.comb_off + ((static_cast<size_t>(parity) * n + me) * L.round + token) * hrow);
    for (int ch = lane_id(); ch < chunks; ch += 32) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int k = 0; k < L.topk; ++k) {
        const int le = meta->expert[k], slot = meta->slot[k];
        if (le < 0 || slot < 0 || slot >= C) continue;  // not this rank's, or dropped at dispatch
        const int4 v = reinterpret_cast<const int4*>(a.expert_out + (static_cast<size_t>(le) * C + slot) * hrow)[ch];
        add_bf16x8(acc, v, a.weighted ? meta->weight[k] : 1.0f);
      }
      dst[ch] = pack_bf16x8(acc);
    }
  }
  __shared__ unsigned* arrive;
  if (threadIdx.x == 0) arrive = at<unsigned>(h, L.arrive_off) + 2;
  __syncthreads();
  if (last_block(arrive)) {
    if (a.r.last) h.local_signals[kCombinedSlot] = op;
    for (int d = 0; d < n; ++d) device::st_release(h.signals[d] + combine_flag(parity, me), c);  // every peer: rule (R)
  }
}

__global__ void __launch_bounds__(kThreads) combine_recv_kernel(CombineArgs a) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n;
  const uint64_t c = h.local_signals[kCombineEpochSlot] + 1;
  const int parity = static_cast<int>(c & 1);
  const bool ok = wait_all(h, n, [&](int p) { return combine_flag(parity, p); }, c, nullptr);
  const uint64_t* token_ranks = at<uint64_t>(h, L.token_ranks_off);
  const size_t hrow = static_cast<size_t>(L.hidden) * 2;
  const int chunks = L.hidden / 8;
  for (int t = a.r.t0 + warp_global(); ok && t < a.r.t1; t += warps_total()) {
    const uint64_t mask = token_ranks[t];
    int4* dst = reinterpret_cast<int4*>(a.out + static_cast<size_t>(t) * hrow);
    for (int ch = lane_id(); ch < chunks; ch += 32) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (uint64_t m = mask; m != 0; m &= m - 1) {  // rank order: the same sum on every call
        const int r = __ffsll(static_cast<long long>(m)) - 1;
        const int4 v = at<const int4>(h, L.comb_off + ((static_cast<size_t>(parity) * n + r) * L.round + (t - a.r.t0)) * hrow)[ch];
        add_bf16x8(acc, v, 1.0f);
      }
      dst[ch] = pack_bf16x8(acc);
    }
  }
  __shared__ unsigned* arrive;
  if (threadIdx.x == 0) arrive = at<unsigned>(h, L.arrive_off) + 3;
  __syncthreads();
  if (last_block(arrive)) h.local_signals[kCombineEpochSlot] = c;
}

}  // namespace

void launch_combine_send(const CombineArgs& a, int blocks, cudaStream_t s) {
  combine_send_kernel<<<blocks, kThreads, 0, s>>>(a);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}
void launch_combine_recv(const CombineArgs& a, int blocks, cudaStream_t s) {
  combine_recv_kernel<<<blocks, kThreads, 0, s>>>(a);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::moe::kern
