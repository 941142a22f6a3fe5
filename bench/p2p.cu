// symmem-bench p2p: one-way latency of device-initiated put-with-signal and LL puts (ping-pong / 2), a remote
// atomic's round trip, and put/get bandwidth (SM-driven and copy engine, one direction and both)
// between ranks 0 and 1, beside NCCL send/recv measured in the same run.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "harness.hpp"
#include "pattern.cuh"
#include "symmem/device.cuh"
#include "symmem/device/bulk.cuh"
#include "symmem/device/ll.cuh"

namespace symmem::bench {
namespace {

constexpr int kPingSlot = 10;      // ping-pong signal
constexpr int kPingEpochSlot = 11; // local: rounds completed so far (graph replays continue the count)
constexpr int kGridSlot = 12;      // the grid ping-pong's signal: every block of the peer adds 1 a round
constexpr int kGridTotalSlot = 13; // local: what kGridSlot has reached at the end of the last launch

// Nothing: one replayed launch of it is the floor under every collective kernel's time.
__global__ void empty_kernel() {}

// Ranks 0 and 1 bounce n bytes `iters` times: put-with-signal, then wait for the answer.
// Mode 0: device::put_signal (the library's path). The others are measured for comparison:
// 1: put, then a release store of the signal (the same as 0 since put_signal dropped its extra
// fence); 2: the signal alone (no data); 3: the signal alone, relaxed (device::signal_relaxed);
// 4: the relaxed pair, device::signal_relaxed and device::wait_signal_relaxed (orders nothing).
template <int Mode>
__global__ void pingpong_kernel(DeviceHandle h, int peer, bool initiator, const char* src, size_t n, int iters) {
  uint64_t base = h.local_signals[kPingEpochSlot];
  char* dst = static_cast<char*>(h.local);
  const bool warp = Mode >= 2 || n <= 1024;
  if (warp && threadIdx.x >= 32) return;
  auto send = [&](uint64_t v) {
    if (Mode == 0) {
      if (warp) device::put_signal<device::WarpScope>(h, peer, dst, src, n, kPingSlot, v);
      else device::put_signal<device::BlockScope>(h, peer, dst, src, n, kPingSlot, v);
    } else if (Mode == 1) {
      if (warp) device::put<device::WarpScope>(h, peer, dst, src, n);
      else device::put<device::BlockScope>(h, peer, dst, src, n);
      if (warp) __syncwarp(); else __syncthreads();
      if (threadIdx.x == 0) device::signal(h, peer, kPingSlot, v);
    } else if (Mode == 2) {
      if (threadIdx.x == 0) device::signal(h, peer, kPingSlot, v);
    } else if (threadIdx.x == 0) {
      device::signal_relaxed(h, peer, kPingSlot, v);
    }
  };
  auto recv = [&](uint64_t v) -> bool {
    bool ok = true;
    if (threadIdx.x == 0)
      ok = Mode == 4 ? device::wait_signal_relaxed(h, kPingSlot, Cmp::kGe, v, peer) : device::wait_signal(h, kPingSlot, Cmp::kGe, v, peer);
    if (warp) return __shfl_sync(0xffffffffu, ok, 0);
    return __syncthreads_and(ok);
  };
  for (int i = 1; i <= iters; ++i) {
    const uint64_t v = base + i;
    if (!initiator && !recv(v)) return;
    send(v);
    if (initiator && !recv(v)) return;
  }
  if (threadIdx.x == 0) h.local_signals[kPingEpochSlot] = base + iters;
}

// The bounce as LL lines (device::ll_put / ll_get: the flag in the data, no signal, no fence):
// rank r's lines are the first ll_lines<P>(n) lines of its dst, written by the peer only; each
// round's flag is ws::flag_of of the round's number (the rounds continue over launches through
// kPingEpochSlot, with the other ping-pongs). The receiver unpacks each round into `out` (checked
// after). A warp where the lines are 32 or fewer, else a grid of up to 32 blocks, a line
// or so a thread: thread t of the grid sends and receives lines t, t + stride, ..., and sends a
// round only after it received the peer's (the initiator: before), so each of its lines on the
// peer is rewritten only after the peer's thread t has read it; the threads need not wait for each
// other. The epoch moves on when the grid's last block is done (kLLDoneSlot counts them): every
// block has read it by then. The caller zeroes the lines first (no word of other data may carry a
// round's flag), and one launch's 3600 or fewer rounds never bring a flag round again.
constexpr int kLLDoneSlot = 14;  // local: blocks of the LL ping-pong done in this launch
template <size_t P>
__device__ inline bool ll_ping_warp(size_t n) { return device::ll_lines<P>(n) <= 32; }
template <size_t P>
__global__ void pingpong_ll_kernel(DeviceHandle h, int peer, bool initiator, const char* src, char* out, size_t n, int iters) {
  const uint64_t base = h.local_signals[kPingEpochSlot];
  const bool warp = ll_ping_warp<P>(n);
  if (warp && threadIdx.x >= 32) return;
  const size_t idx = warp ? threadIdx.x : blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t stride = warp ? 32 : size_t(gridDim.x) * blockDim.x;
  const device::LLLine* mine = static_cast<const device::LLLine*>(h.local);
  device::LLLine* theirs = device::peer_ptr(h, peer, static_cast<device::LLLine*>(h.local));
  auto recv = [&](uint64_t v) -> bool {
    const bool ok = device::ll_get<P>(h, mine, out, n, ws::flag_of(v), peer, idx, stride);
    return warp ? __all_sync(0xffffffffu, ok) : __syncthreads_and(ok);
  };
  for (int i = 1; i <= iters; ++i) {
    const uint64_t v = base + i;
    if (!initiator && !recv(v)) return;
    device::ll_put<P>(theirs, src, n, ws::flag_of(v), idx, stride);
    if (initiator && !recv(v)) return;
  }
  if (threadIdx.x != 0) return;
  if (!warp) {
    __threadfence();
    if (atomicAdd(reinterpret_cast<unsigned long long*>(h.local_signals + kLLDoneSlot), 1ull) != gridDim.x - 1) return;
    h.local_signals[kLLDoneSlot] = 0;
  }
  h.local_signals[kPingEpochSlot] = base + iters;
}
// The LL format symmem's collectives give n bytes a peer (ws::ll_payload_for, any slot: narrow
// lines to 32 KiB, wide above), and its lines.
size_t ll_ping_payload(size_t n) { return ws::ll_payload_for(n, ~size_t(0)); }
size_t ll_ping_lines(size_t n) {
  return ll_ping_payload(n) == ws::kLLNarrow ? ws::ll_lines<ws::kLLNarrow>(n) : ws::ll_lines<ws::kLLPayload>(n);
}

// The memory-ordering forms of a bounce (SYMMEM_BENCH_P2P_ORDER=1, at the first size only): what
// each side of a signal costs. Sig: 0 a release store (device::signal), 1 a relaxed store (orders
// nothing: a notification), 2 a system fence then a relaxed store, 3 fence.acq_rel.sys then a
// relaxed store. Wait: 0 acquire polls (device::wait_signal), 1 relaxed polls then one acquire load
// of the seen value, 2 relaxed polls alone (orders nothing), 3 relaxed polls then fence.acq_rel.sys.
// Data: 0 the signal alone; 1 a warp puts n bytes before it (device::put); 2 and 3 the same by
// 8-byte accesses (n a multiple of 8), the source read as usual (2: where L1 holds it from the last
// round, it comes from L1) or through L2 only (3: ld.global.cg, as after an acquire, which empties
// L1): what an acquire costs the sender's next reads. Bounded at 2 s a wait (returns; the round's
// time then shows it).
template <int Sig, int Wait, int Data>
__global__ void pingpong_order_kernel(DeviceHandle h, int peer, bool initiator, const char* src, size_t n, int iters) {
  if (threadIdx.x >= 32) return;
  const uint64_t base = h.local_signals[kPingEpochSlot];
  char* dst = static_cast<char*>(h.local);
  uint64_t* mine = h.local_signals + kPingSlot;
  auto send = [&](uint64_t v) {
    if (Data == 1) device::put<device::WarpScope>(h, peer, dst, src, n);
    if (Data >= 2) {
      const uint64_t* s8 = reinterpret_cast<const uint64_t*>(src);
      uint64_t* d8 = device::peer_ptr(h, peer, reinterpret_cast<uint64_t*>(dst));
      for (size_t i = threadIdx.x; i < n / 8; i += 32) d8[i] = Data == 3 ? __ldcg(s8 + i) : s8[i];
    }
    __syncwarp();
    if (threadIdx.x != 0) return;
    uint64_t* p = h.signals[peer] + kPingSlot;
    if (Sig == 0) device::st_release(p, v);
    else {
      if (Sig == 2) __threadfence_system();
      if (Sig == 3) device::fence_acq_rel();
      device::st_relaxed(p, v);
    }
  };
  auto recv = [&](uint64_t v) {
    if (threadIdx.x == 0) {
      const uint64_t t0 = device::global_timer_ns();
      for (uint32_t it = 1;; ++it) {
        const uint64_t x = Wait == 0 ? device::ld_acquire(mine) : device::ld_relaxed(mine);
        if (x >= v) {
          if (Wait == 1) (void)device::ld_acquire(mine);
          if (Wait == 3) device::fence_acq_rel();
          break;
        }
        if ((it & 255u) == 0u && device::global_timer_ns() - t0 > 2000000000ull) break;
      }
    }
    __syncwarp();
  };
  for (int i = 1; i <= iters; ++i) {
    const uint64_t v = base + i;
    if (!initiator) recv(v);
    send(v);
    if (initiator) recv(v);
  }
  if (threadIdx.x == 0) h.local_signals[kPingEpochSlot] = base + iters;
}

// The same bounce from a grid: block b puts its 16-byte-aligned slice of the n bytes with
// put_signal<BlockScope>, adding 1 to the peer's kGridSlot, and a round is received once the slot
// has grown by gridDim.x. Both ranks send the same rounds, so the slot's value at the end of a
// launch is its value at the start plus iters * gridDim.x, kept in kGridTotalSlot by block 0 for
// the next launch (any grid size). Block 0 writes it only after its last wait, which needs the
// peer to have received a round from every block of this grid (iters >= 2): every block has read
// the old total by then.
__global__ void pingpong_grid_kernel(DeviceHandle h, int peer, bool initiator, const char* src, size_t n, int iters) {
  const uint64_t base = h.local_signals[kGridTotalSlot];
  const size_t words = n / 16, g = gridDim.x, b = blockIdx.x;
  const size_t lo = words * b / g * 16, hi = b + 1 == g ? n : words * (b + 1) / g * 16;
  char* dst = static_cast<char*>(h.local);
  auto recv = [&](int i) -> bool {
    bool ok = true;
    if (threadIdx.x == 0) ok = device::wait_signal(h, kGridSlot, Cmp::kGe, base + static_cast<uint64_t>(i) * g, peer);
    return __syncthreads_and(ok);
  };
  for (int i = 1; i <= iters; ++i) {
    if (!initiator && !recv(i)) return;
    device::put_signal<device::BlockScope>(h, peer, dst + lo, src + lo, hi - lo, kGridSlot, 1, SignalOp::kAdd);
    if (initiator && !recv(i)) return;
  }
  if (b == 0 && threadIdx.x == 0) h.local_signals[kGridTotalSlot] = base + static_cast<uint64_t>(iters) * g;
}

// Blocks of the grid ping-pong at n bytes: 16 KiB or more a block, at most 32 (session 74, 2 x
// H200: 32 blocks at 1 MiB 5.3 us against one block's 25.5, 4 at 128 KiB 3.1 against 5.3).
int pingpong_blocks(size_t n) { return static_cast<int>(std::min<size_t>(32, std::max<size_t>(1, n / (size_t(16) << 10)))); }

// A remote atomic's round trip: rank 0's thread 0 adds to rank 1's word `iters` times, each add
// waiting for the previous one's old value (device::atomic_fetch_add: one round trip each).
__global__ void fetch_add_kernel(DeviceHandle h, int peer, int iters, unsigned long long* sink) {
  unsigned long long* word = static_cast<unsigned long long*>(h.local);
  unsigned long long v = 1;
  for (int i = 0; i < iters; ++i) v = device::atomic_fetch_add(h, peer, word, (v & 1ull) + 1ull);
  *sink = v;
}

// Bulk-copy put with an explicit grid and stage size (for the sweep).
__global__ void put_bulk_kernel(DeviceHandle h, int peer, const void* src, size_t n, size_t chunk) {
#if defined(SYMMEM_HAS_BULK_COPY)
  extern __shared__ __align__(128) char stages[];
  __shared__ uint64_t bars[device::kBulkStages];
  if (threadIdx.x == 0)
    device::bulk_copy_chunks(device::peer_ptr(h, peer, static_cast<char*>(h.local)), static_cast<const char*>(src), n, chunk,
                             blockIdx.x, gridDim.x, stages, bars);
#endif
}

// Whether put_bulk_kernel's code for this GPU has the bulk copy (code generated for sm_90 on).
bool bulk_sweep_runs() {
  cudaFuncAttributes a{};
  return cudaFuncGetAttributes(&a, put_bulk_kernel) == cudaSuccess && a.ptxVersion >= 90;
}

// SM put with an explicit grid (for the block-count sweep).
__global__ void put_grid_kernel(DeviceHandle h, int peer, const void* src, size_t n) {
  device::copy_bytes(device::peer_ptr(h, peer, h.local), src, n, device::grid_index(), device::grid_size());
}

struct Buffers {
  SymmetricBuffer dst, sym_src;  // put lands in dst; get reads sym_src
  void* src = nullptr;           // local source
  void* out = nullptr;           // local destination (get, NCCL recv)
  unsigned long long* wrong = nullptr;
};

long count_wrong(Harness& h, const void* p, size_t n, uint64_t seed) {
  unsigned long long* w;
  SYMMEM_CUDA_CHECK(cudaMallocAsync(&w, sizeof(*w), h.stream()));
  SYMMEM_CUDA_CHECK(cudaMemsetAsync(w, 0, sizeof(*w), h.stream()));
  count_wrong_kernel<<<264, 512, 0, h.stream()>>>(static_cast<const uint8_t*>(p), n, seed, w);
  unsigned long long host = 0;
  SYMMEM_CUDA_CHECK(cudaMemcpyAsync(&host, w, sizeof(host), cudaMemcpyDeviceToHost, h.stream()));
  SYMMEM_CUDA_CHECK(cudaFreeAsync(w, h.stream()));
  h.ctx().synchronize(h.stream(), "check");
  return static_cast<long>(host);
}

void poison(Harness& h, void* p, size_t n) {
  SYMMEM_CUDA_CHECK(cudaMemsetAsync(p, 0xCD, n, h.stream()));
  h.ctx().synchronize(h.stream());
  h.team().barrier("poison");
}

}  // namespace

void run_p2p(Harness& h) {
  const Options& o = h.opt();
  require(h.size() >= 2, "p2p needs at least 2 ranks (it measures rank 0 <-> rank 1)");
  const int me = h.rank();
  const bool active = me < 2;
  const int peer = me == 0 ? 1 : 0;
  const size_t cap = o.max_bytes;
  Buffers b;
  b.dst = h.heap().alloc(cap);
  b.sym_src = h.heap().alloc(cap);
  SYMMEM_CUDA_CHECK(cudaMalloc(&b.src, cap));
  SYMMEM_CUDA_CHECK(cudaMalloc(&b.out, cap));
  fill_pattern_kernel<<<264, 512, 0, h.stream()>>>(static_cast<uint8_t*>(b.src), cap, me);
  fill_pattern_kernel<<<264, 512, 0, h.stream()>>>(static_cast<uint8_t*>(b.sym_src.ptr()), cap, me);
  h.ctx().synchronize(h.stream());
  h.team().barrier("p2p setup");
  ncclComm_t comm = h.nccl();

  if (me == 0) {
    std::printf("# symmem-bench p2p: ranks 0 <-> 1 of %d, %s, NCCL %d\n", h.size(), h.gpu_name().c_str(), NCCL_VERSION_CODE);
    std::printf("# latency: one-way, ping-pong / 2 (us), put_signal from one block (from 32 KiB the faster of one block and a\n"
                "#   grid of up to 32, 16 KiB or more a block: JSON one_block_us, grid_us); lat_ll: the same bounce as LL\n"
                "#   lines (device::ll_put / ll_get, the flag in the data; a warp, or a grid of a line a thread), up to 64 KiB\n"
                "#   (JSON ll_put_us);\n"
                "# bandwidth: GB/s each way; uni = rank 0 -> 1, bi = both at once\n");
    std::printf("%12s %9s %9s %9s | %8s %8s %8s %8s %8s | %8s %8s %8s | %6s\n", "size", "lat_put", "lat_ll", "lat_nccl", "put_sm", "put_ce",
                "get_sm", "get_ce", "nccl", "putsm_bi", "putce_bi", "nccl_bi", "#wrong");
  }
  for (size_t n : h.sizes()) {
    Row lat{"p2p_latency", "int8", "put_signal", n};
    long ping_wrong = 0;  // bytes the ping-pongs left wrong (counted into the size's #wrong)
    const int pp_iters = n <= (64 << 10) ? 200 : 20;
    if (n <= (size_t(1) << 20)) {
      auto pp = [&](auto kernel) {
        return h.time_once([&](cudaStream_t s) {
          if (active) kernel<<<1, 512, 0, s>>>(b.dst.handle(), peer, me == 0, static_cast<char*>(b.src), n, pp_iters);
        }) / (2.0 * pp_iters);
      };
      // From 32 KiB the faster of one block and a grid (each block's put_signal adding to one
      // signal): what device-initiated puts reach at that size. Every form that moves the n bytes
      // leaves the peer's source in dst, checked after them (the LL put and the atomic below
      // write other things there).
      poison(h, b.dst.ptr(), n);
      lat.symmem_us = pp(pingpong_kernel<0>);
      lat.extra["one_block_us"] = lat.symmem_us;
      const int grid = pingpong_blocks(n);
      lat.extra["grid_blocks"] = grid;
      if (grid > 1) {
        const double g_us = h.time_once([&](cudaStream_t s) {
          if (active) pingpong_grid_kernel<<<grid, 512, 0, s>>>(b.dst.handle(), peer, me == 0, static_cast<char*>(b.src), n, pp_iters);
        }) / (2.0 * pp_iters);
        lat.extra["grid_us"] = g_us;
        lat.symmem_us = std::min(lat.symmem_us, g_us);
      }
      lat.extra["put_then_release_us"] = pp(pingpong_kernel<1>);
      if (active) ping_wrong = count_wrong(h, b.dst.ptr(), n, peer);
      // The bounce as LL lines, up to 64 KiB where the lines fit dst: zeroed first, each received
      // message unpacked into out, checked after.
      const size_t ll_bytes = ll_ping_lines(n) * ws::kLLLineBytes;
      if (n <= (size_t(64) << 10) && ll_bytes <= cap) {
        SYMMEM_CUDA_CHECK(cudaMemsetAsync(b.dst.ptr(), 0, ll_bytes, h.stream()));
        poison(h, b.out, n);
        const int blocks = static_cast<int>(std::min<size_t>(32, (ll_ping_lines(n) + 511) / 512));  // a line a thread
        auto ll = [&](auto kernel) {
          return h.time_once([&](cudaStream_t s) {
            if (active)
              kernel<<<blocks, 512, 0, s>>>(b.dst.handle(), peer, me == 0, static_cast<char*>(b.src), static_cast<char*>(b.out), n, pp_iters);
          }) / (2.0 * pp_iters);
        };
        lat.extra["ll_put_us"] =
            ll_ping_payload(n) == ws::kLLNarrow ? ll(pingpong_ll_kernel<ws::kLLNarrow>) : ll(pingpong_ll_kernel<ws::kLLPayload>);
        if (active) ping_wrong += count_wrong(h, b.out, n, peer);
      }
      if (n == o.min_bytes) {
        lat.extra["signal_only_us"] = pp(pingpong_kernel<2>);
        lat.extra["signal_relaxed_us"] = pp(pingpong_kernel<3>);
        lat.extra["relaxed_pair_us"] = pp(pingpong_kernel<4>);
        // A remote atomic's round trip (rank 0 -> 1; rank 1 idle), on the dst buffer's first word.
        lat.extra["atomic_fetch_add_us"] = h.time_once([&](cudaStream_t s) {
          if (me == 0) fetch_add_kernel<<<1, 1, 0, s>>>(b.dst.handle(), peer, pp_iters, static_cast<unsigned long long*>(b.out));
        }) / pp_iters;
        if (std::getenv("SYMMEM_BENCH_P2P_ORDER")) {
          // Every (signal, wait) form above, the signal alone and after a warp's put of n bytes.
          auto order = [&](auto kernel) {
            return h.time_once([&](cudaStream_t s) {
              if (active) kernel<<<1, 32, 0, s>>>(b.dst.handle(), peer, me == 0, static_cast<char*>(b.src), n, pp_iters);
            }) / (2.0 * pp_iters);
          };
          // A row: signal form S and data form D (pingpong_order_kernel) under each wait form.
          auto row = [&](const char* sig, auto s_c, auto d_c) {
            constexpr int S = decltype(s_c)::value, D = decltype(d_c)::value;
            const double w[4] = {order(pingpong_order_kernel<S, 0, D>), order(pingpong_order_kernel<S, 1, D>),
                                 order(pingpong_order_kernel<S, 2, D>), order(pingpong_order_kernel<S, 3, D>)};
            if (me == 0) std::printf("# order %-32s %8.2f %8.2f %8.2f %8.2f\n", sig, w[0], w[1], w[2], w[3]);
            static const char* const waits[4] = {"acquire_polls", "relaxed_polls_acquire_load", "relaxed_polls", "relaxed_polls_fence"};
            for (int c = 0; c < 4; ++c) lat.extra[std::string("order ") + sig + " / " + waits[c] + "_us"] = w[c];
          };
          using I0 = std::integral_constant<int, 0>;
          using I1 = std::integral_constant<int, 1>;
          using I2 = std::integral_constant<int, 2>;
          using I3 = std::integral_constant<int, 3>;
          if (me == 0)
            std::printf("# order: one-way us at %zu B by signal (rows) and wait (columns: acquire polls, relaxed polls + acquire"
                        " load, relaxed polls only, relaxed polls + fence)\n", n);
          row("signal release", I0{}, I0{});
          row("signal relaxed", I1{}, I0{});
          row("signal sysfence+relaxed", I2{}, I0{});
          row("put + release", I0{}, I1{});
          row("put + sysfence+relaxed", I2{}, I1{});
          row("put + acqrelfence+relaxed", I3{}, I1{});
          if (n % 8 == 0) {
            row("put8 + release", I0{}, I2{});
            row("put8 (source via L2) + release", I0{}, I3{});
          }
        }
        // Back-to-back launches of an empty kernel, timed as the collectives are.
        lat.extra["empty_kernel_us"] = h.time_graph([](cudaStream_t s) { empty_kernel<<<1, 32, 0, s>>>(); }, o.iters);
        if (me == 0)
          std::printf("# latency variants at %zu B: put_signal %.2f us, put+release %.2f us, signal only %.2f us, signal_relaxed only"
                      " %.2f us, signal_relaxed + wait_signal_relaxed %.2f us; an empty kernel in a graph %.2f us; a remote atomic_fetch_add's round trip %.2f us\n", n, lat.symmem_us,
                      lat.extra["put_then_release_us"], lat.extra["signal_only_us"], lat.extra["signal_relaxed_us"], lat.extra["relaxed_pair_us"], lat.extra["empty_kernel_us"],
                      lat.extra["atomic_fetch_add_us"]);
      }
      lat.nccl_us = h.time_once([&](cudaStream_t s) {
        for (int i = 0; active && i < pp_iters; ++i) {
          if (me == 0) { ncclSend(b.src, n, ncclInt8, peer, comm, s); ncclRecv(b.out, n, ncclInt8, peer, comm, s); }
          else { ncclRecv(b.out, n, ncclInt8, peer, comm, s); ncclSend(b.src, n, ncclInt8, peer, comm, s); }
        }
      }) / (2.0 * pp_iters);
    }
    const int ops = n >= (size_t(256) << 20) ? 3 : n >= (size_t(16) << 20) ? 5 : o.iters;
    auto gbps = [&](double us) { return us > 0 ? n / us / 1000.0 : -1.0; };
    long wrong = ping_wrong;
    auto measure_put = [&](Engine e, bool bidir) {
      poison(h, b.dst.ptr(), n);
      double us = h.time_graph([&](cudaStream_t s) {
        if (me == 0 || (bidir && me == 1)) stream::put(b.dst, peer, 0, b.src, n, s, e);
      }, ops);
      if (me == 1 || (bidir && me == 0)) wrong += count_wrong(h, b.dst.ptr(), n, peer);
      return us;
    };
    auto measure_get = [&](Engine e) {
      poison(h, b.out, n);
      double us = h.time_graph([&](cudaStream_t s) {
        if (me == 0) stream::get(b.out, b.sym_src, peer, 0, n, s, e);
      }, ops);
      if (me == 0) wrong += count_wrong(h, b.out, n, peer);
      return us;
    };
    auto measure_nccl = [&](bool bidir) {
      poison(h, b.out, n);
      double us = h.time_graph([&](cudaStream_t s) {
        if (!active) return;
        ncclGroupStart();
        if (me == 0 || bidir) ncclSend(b.src, n, ncclInt8, peer, comm, s);
        if (me == 1 || bidir) ncclRecv(b.out, n, ncclInt8, peer, comm, s);
        ncclGroupEnd();
      }, ops);
      if (me == 1 || (bidir && me == 0)) wrong += count_wrong(h, b.out, n, peer);
      return us;
    };
    double put_sm = measure_put(Engine::kSM, false), put_ce = measure_put(Engine::kCopyEngine, false);
    double get_sm = measure_get(Engine::kSM), get_ce = measure_get(Engine::kCopyEngine);
    double nccl_uni = measure_nccl(false);
    double put_sm_bi = measure_put(Engine::kSM, true), put_ce_bi = measure_put(Engine::kCopyEngine, true);
    double nccl_bi = measure_nccl(true);
    wrong = h.sum_over_ranks(wrong);
    auto row = [&](const char* op, const char* algo, double us, double nccl_us) {
      Row r{op, "int8", algo, n};
      r.symmem_us = us;
      r.nccl_us = nccl_us;
      r.symmem_gbps = gbps(us);
      r.nccl_gbps = gbps(nccl_us);
      r.wrong = wrong;
      h.add(r);
    };
    if (lat.symmem_us > 0) { lat.wrong = wrong; h.add(lat); }
    row("p2p_put", "sm", put_sm, nccl_uni);
    row("p2p_put", "copy_engine", put_ce, nccl_uni);
    row("p2p_get", "sm", get_sm, nccl_uni);
    row("p2p_get", "copy_engine", get_ce, nccl_uni);
    row("p2p_put_bidir", "sm", put_sm_bi, nccl_bi);
    row("p2p_put_bidir", "copy_engine", put_ce_bi, nccl_bi);
    if (me == 0) {
      const auto llp = lat.extra.find("ll_put_us");
      std::printf("%12zu %9.2f %9.2f %9.2f | %8.1f %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f | %6ld\n", n, lat.symmem_us,
                  llp == lat.extra.end() ? -1.0 : llp->second, lat.nccl_us,
                  gbps(put_sm), gbps(put_ce), gbps(get_sm), gbps(get_ce), gbps(nccl_uni), gbps(put_sm_bi), gbps(put_ce_bi),
                  gbps(nccl_bi), wrong);
      std::fflush(stdout);
    }
  }

  // Block-count sweep of the SM put at the largest size (what the default grid should be).
  if (std::getenv("SYMMEM_BENCH_SWEEP")) {
    const size_t n = cap;
    for (int threads : {512, 1024})
      for (int blocks : {32, 66, 132, 264}) {
        double us = h.time_graph([&](cudaStream_t s) {
          if (me == 0) put_grid_kernel<<<blocks, threads, 0, s>>>(b.dst.handle(), peer, b.src, n);
        }, 3);
        Row r{"p2p_put_sweep", "int8", "sm_b" + std::to_string(blocks) + "_t" + std::to_string(threads), n};
        r.symmem_us = us;
        r.symmem_gbps = n / us / 1000.0;
        h.add(r);
        if (me == 0) std::printf("# sweep: %zu bytes, %3d blocks x %4d threads: %8.1f GB/s\n", n, blocks, threads, r.symmem_gbps);
      }
    if (bulk_sweep_runs())
    for (size_t chunk : {size_t(8) << 10, size_t(16) << 10, size_t(32) << 10, size_t(48) << 10})
      for (int blocks : {16, 32, 66, 132}) {
        cudaFuncSetAttribute(put_bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(chunk * device::kBulkStages));
        double us = h.time_graph([&](cudaStream_t s) {
          if (me == 0) put_bulk_kernel<<<blocks, 32, chunk * device::kBulkStages, s>>>(b.dst.handle(), peer, b.src, n, chunk);
        }, 3);
        Row r{"p2p_put_sweep", "int8", "bulk_b" + std::to_string(blocks) + "_c" + std::to_string(chunk), n};
        r.symmem_us = us;
        r.symmem_gbps = n / us / 1000.0;
        h.add(r);
        if (me == 0) std::printf("# sweep: %zu bytes, bulk %3d blocks x %6zu-byte stages: %8.1f GB/s\n", n, blocks, chunk, r.symmem_gbps);
      }
  }
  h.heap().free(b.dst);
  h.heap().free(b.sym_src);
  cudaFree(b.src);
  cudaFree(b.out);
}

}  // namespace symmem::bench
