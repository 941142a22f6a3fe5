// The device API: put/get at each scope with odd sizes and alignments, put-with-signal ordering,
// signal add (released and relaxed), LL puts and gets of whole messages, and multi-channel barriers.
#include <algorithm>
#include <cstdio>

#include "gpu_env.hpp"
#include "symmem/device.cuh"

using namespace symmem;
using namespace symmem::test;

namespace {

enum { kThread = 0, kWarp = 1, kBlock = 2 };

__global__ void put_kernel(DeviceHandle h, int scope, int peer, size_t dst_off, const char* src, size_t n) {
  char* dst = static_cast<char*>(h.local) + dst_off;
  if (scope == kThread) {
    if (threadIdx.x == 0) device::put<device::ThreadScope>(h, peer, dst, src, n);
  } else if (scope == kWarp) {
    if (threadIdx.x < 32) device::put<device::WarpScope>(h, peer, dst, src, n);
  } else {
    device::put<device::BlockScope>(h, peer, dst, src, n);
  }
  device::barrier_block(h, 0);
}

__global__ void get_kernel(DeviceHandle h, int scope, int peer, char* dst, size_t src_off, size_t n) {
  const char* src = static_cast<const char*>(h.local) + src_off;
  if (scope == kThread) {
    if (threadIdx.x == 0) device::get<device::ThreadScope>(h, peer, dst, src, n);
  } else if (scope == kWarp) {
    if (threadIdx.x < 32) device::get<device::WarpScope>(h, peer, dst, src, n);
  } else {
    device::get<device::BlockScope>(h, peer, dst, src, n);
  }
}

// Rounds of: put new data + signal(round) to the next rank, wait for round from the previous, copy
// what arrived out. If a signal could overtake its data, an older round's bytes would show up.
__global__ void ring_put_signal_kernel(DeviceHandle h, const char* src, size_t n, int rounds, char* out, bool* ok) {
  const int next = (h.rank + 1) % h.nranks, prev = (h.rank + h.nranks - 1) % h.nranks;
  char* slot_data = static_cast<char*>(h.local);  // [2][n]: double-buffered by round parity
  bool good = true;
  for (int r = 1; r <= rounds; ++r) {
    char* dst = slot_data + (r & 1) * n;
    device::put_signal<device::BlockScope>(h, next, dst, src + static_cast<size_t>(r) * n, n, 1, r);
    if (threadIdx.x == 0) good &= device::wait_signal(h, 1, Cmp::kGe, r, prev);
    __syncthreads();
    device::copy_bytes(out + static_cast<size_t>(r) * n, dst, n, threadIdx.x, blockDim.x);
    // The peer may overwrite this half two rounds later: tell it we have read it.
    __syncthreads();
    if (threadIdx.x == 0) {
      device::signal(h, prev, 2, r, SignalOp::kSet);
      good &= device::wait_signal(h, 2, Cmp::kGe, r, next);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) *ok = good;
}

// Form 0: signal and wait_signal; 1: signal_relaxed and wait_signal; 2: the relaxed pair
// (signal_relaxed, wait_signal_relaxed), and beside it an atomic_add to every rank's `word`
// waited for by wait_word_relaxed.
template <int kForm>
__global__ void signal_add_kernel(DeviceHandle h, int rounds, uint64_t base, uint64_t* word, bool* ok) {
  bool good = true;
  for (int r = 1; r <= rounds; ++r) {
    if (threadIdx.x < h.nranks) {
      if (kForm == 0) device::signal(h, threadIdx.x, 5, 1, SignalOp::kAdd);
      else device::signal_relaxed(h, threadIdx.x, 5, 1, SignalOp::kAdd);
      if (kForm == 2) device::atomic_add(h, threadIdx.x, word, 1);
    }
    const uint64_t expect = base + static_cast<uint64_t>(r) * h.nranks;
    if (threadIdx.x == 0) {
      if (kForm < 2) good &= device::wait_signal(h, 5, Cmp::kGe, expect);
      else good &= device::wait_signal_relaxed(h, 5, Cmp::kGe, expect) && device::wait_word_relaxed(h, word, Cmp::kGe, static_cast<uint64_t>(r) * h.nranks);
    }
    good = __syncthreads_and(good);
  }
  if (threadIdx.x == 0) *ok = good;
}

// Rounds of LL messages around the ring: round r's n bytes (src + r n) go to the next rank's lines
// of round r (a region of `region` lines a round, so no line is reused) with flag flag0 + r, and
// the previous rank's arrive in out + r n. A warp (scope kWarp) or the whole block moves them.
template <size_t P>
__global__ void ll_ring_kernel(DeviceHandle h, int scope, const char* src, size_t n, int rounds, size_t region, uint32_t flag0, char* out,
                               bool* ok) {
  if (scope == kWarp && threadIdx.x >= 32) return;
  const size_t stride = scope == kWarp ? 32 : blockDim.x;
  const int next = (h.rank + 1) % h.nranks, prev = (h.rank + h.nranks - 1) % h.nranks;
  device::LLLine* lines = static_cast<device::LLLine*>(h.local);
  bool good = true;
  for (int r = 0; r < rounds; ++r) {
    device::LLLine* at = lines + static_cast<size_t>(r) * region;
    device::ll_put<P>(device::peer_ptr(h, next, at), src + static_cast<size_t>(r) * n, n, flag0 + r, threadIdx.x, stride);
    good &= device::ll_get<P>(h, at, out + static_cast<size_t>(r) * n, n, flag0 + r, prev, threadIdx.x, stride);
  }
  good = scope == kWarp ? __all_sync(0xffffffffu, good) : __syncthreads_and(good);
  if (threadIdx.x == 0) *ok = good;
}

// Rounds of barriers, each block on its own channel: every block writes `words` words of the round
// into its slot on every peer, passes a barrier, checks every peer's slot in this rank's buffer,
// and passes another. late_ns > 0: rank (round % n) spins late_ns x 1-12 (the block and round vary
// it) before it writes, so the others' waits in barrier_block run past its eager phase into the
// paced one (device::wait_until_patient, whose acquire is a second load).
__device__ inline uint64_t round_tag(int round, int rank, int i) {
  return (static_cast<uint64_t>(round) << 40) ^ (static_cast<uint64_t>(rank) << 32) ^ static_cast<uint64_t>(i * 2654435761u);
}
__global__ void barrier_rounds_kernel(DeviceHandle h, int rounds, int words, unsigned late_ns, int* errors) {
  uint64_t* buf = static_cast<uint64_t*>(h.local);  // [block][rank][words]
  const size_t mine = (static_cast<size_t>(blockIdx.x) * h.nranks + h.rank) * words;
  for (int r = 1; r <= rounds; ++r) {
    if (late_ns != 0 && r % h.nranks == h.rank && threadIdx.x == 0) {
      const uint64_t until = device::global_timer_ns() + static_cast<uint64_t>(late_ns) * (1 + blockIdx.x % 4) * (1 + r % 3);
      while (device::global_timer_ns() < until) {
      }
    }
    __syncthreads();
    for (int p = 0; p < h.nranks; ++p) {
      uint64_t* dst = device::peer_ptr(h, p, buf) + mine;
      for (int i = threadIdx.x; i < words; i += blockDim.x) dst[i] = round_tag(r, h.rank, i);
    }
    if (!device::barrier_block(h, blockIdx.x)) { if (threadIdx.x == 0) atomicAdd(errors, 1000); return; }
    for (int p = 0; p < h.nranks; ++p) {
      const uint64_t* src = buf + (static_cast<size_t>(blockIdx.x) * h.nranks + p) * words;
      for (int i = threadIdx.x; i < words; i += blockDim.x)
        if (src[i] != round_tag(r, p, i)) atomicAdd(errors, 1);
    }
    if (!device::barrier_block(h, blockIdx.x)) { if (threadIdx.x == 0) atomicAdd(errors, 1000); return; }
  }
}

// Block 0 waits as barrier_block does (wait_until_patient) on a slot nobody signals; block 1 raises
// the context's abort flag, as another wait's timeout would, once `after_ns` have passed (the
// first's pauses have grown to their cap). times: the wait's start and end, the abort's time, and
// whether the wait said it was satisfied (all on the GPU's global clock).
__global__ void patient_abort_kernel(DeviceHandle h, int slot, uint64_t after_ns, uint64_t* times) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    times[0] = device::global_timer_ns();
    const bool ok = device::wait_until_patient(h, h.local_signals + slot, Cmp::kGe, 1, WaitKind::kSignal, h.rank, device::kBarrierEagerNs,
                                               device::kBarrierBackoffNs, device::kBarrierPaceShift);
    times[1] = device::global_timer_ns();
    times[3] = ok ? 1 : 0;
  } else {
    const uint64_t until = device::global_timer_ns() + after_ns;
    while (device::global_timer_ns() < until) {
    }
    times[2] = device::global_timer_ns();
    *reinterpret_cast<volatile unsigned int*>(&h.error->abort_waits) = 1u;  // (as the host does: a plain store to its memory)
  }
}

const char* scope_name(int s) { return s == kThread ? "thread" : s == kWarp ? "warp" : "block"; }

}  // namespace

TEST(DeviceApi, PutAndGetEveryScopeSizeAndAlignment) {
  const int n = heap().team().size(), me = heap().team().rank();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const size_t cap = (size_t(1) << 20) + 64;
  SymmetricBuffer b = heap().alloc(cap + 64);
  DeviceBuffer src(cap + 64), out(cap + 64);
  uint64_t seed = 1;
  for (int scope : {kThread, kWarp, kBlock}) {
    // (7, 31: tails of every piece width; 512 and 4096 a 16-byte vector for each member of a warp
    // and of the block, 513 and 4099 one byte more; 16 and 48: aligned offsets other than 0.)
    for (size_t len : {size_t(1), size_t(7), size_t(15), size_t(16), size_t(17), size_t(31), size_t(512), size_t(513), size_t(1000),
                       size_t(4096), size_t(4099), size_t(1) << 20}) {
      if (scope == kThread && len > 65536) continue;
      for (auto [so, dofs] : {std::pair<size_t, size_t>{0, 0}, {1, 3}, {4, 16}, {3, 3}, {16, 48}}) {
        ++seed;
        // Poison everything, then put my random bytes at dofs in the next rank's buffer.
        SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), kPoison, cap + 64));
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        stream::barrier(b, nullptr);
        auto mine = random_bytes(len, seed * 131 + me);
        upload(src.as<char>() + so, mine);
        put_kernel<<<1, 256>>>(b.handle(), scope, next, dofs, src.as<char>() + so, len);
        ctx()->synchronize(nullptr, "put");
        auto got = download(b.ptr(), cap);
        auto expect = std::vector<uint8_t>(cap, kPoison);
        auto from_prev = random_bytes(len, seed * 131 + prev);
        std::copy(from_prev.begin(), from_prev.end(), expect.begin() + dofs);
        ASSERT_ALL(first_diff(got, expect) == -1, "put, scope " << scope_name(scope) << " len " << len << " src+" << so << " dst+" << dofs
                                                                << ": first wrong byte at " << first_diff(got, expect));

        // get: read the next rank's buffer (it holds my data at dofs) into poisoned local memory.
        SYMMEM_CUDA_CHECK(cudaMemset(out.p, kPoison, cap));
        get_kernel<<<1, 256>>>(b.handle(), scope, prev, out.as<char>() + so, dofs, len);
        ctx()->synchronize(nullptr, "get");
        auto got2 = download(out.as<char>() + so, len);
        // prev's buffer holds what prev-1 put; regenerate it.
        auto expect2 = random_bytes(len, seed * 131 + (prev + n - 1) % n);
        ASSERT_ALL(first_diff(got2, expect2) == -1, "get, scope " << scope_name(scope) << " len " << len << ": first wrong byte at "
                                                                  << first_diff(got2, expect2));
        ASSERT_ALL(download(out.as<char>() + so + len, 1)[0] == kPoison, "get, scope " << scope_name(scope) << " len " << len
                                                                                        << " wrote past the end");
        stream::barrier(b, nullptr);
        ctx()->synchronize(nullptr);
      }
    }
  }
  heap().free(b);
}

TEST(DeviceApi, PutSignalNeverOvertakesItsData) {
  const int me = heap().team().rank();
  const size_t len = 64 * 1024 + 48;
  const int rounds = 20;
  SymmetricBuffer b = heap().alloc(2 * len);
  DeviceBuffer src(len * (rounds + 1)), out(len * (rounds + 1));
  DeviceBuffer ok(sizeof(bool));
  upload(src.p, random_bytes(len * (rounds + 1), 7000 + me));
  SYMMEM_CUDA_CHECK(cudaMemset(out.p, kPoison, len * (rounds + 1)));
  ring_put_signal_kernel<<<1, 512>>>(b.handle(), src.as<char>(), len, rounds, out.as<char>(), ok.as<bool>());
  ctx()->synchronize(nullptr, "ring put_signal");
  std::string msg = download(ok.p, 1)[0] ? "" : "a wait timed out; ";
  const int prev = (me + heap().team().size() - 1) % heap().team().size();
  auto expect = random_bytes(len * (rounds + 1), 7000 + prev);
  auto got = download(out.p, len * (rounds + 1));
  for (int r = 1; r <= rounds && msg.empty(); ++r)
    if (!std::equal(got.begin() + r * len, got.begin() + (r + 1) * len, expect.begin() + r * len)) msg += "round " + std::to_string(r) + "'s data";
  ASSERT_ALL(msg.empty(), msg);
  stream::barrier(b, nullptr);
  ctx()->synchronize(nullptr);
  heap().free(b);
}

TEST(DeviceApi, SignalAddCountsEveryPeer) {
  SymmetricBuffer b = heap().alloc(64);
  SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), 0, 64));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  stream::barrier(b, nullptr);  // every rank's word is zero before any peer adds to it
  DeviceBuffer ok(sizeof(bool));
  // Released adds, then relaxed ones (device::signal_relaxed) on top, then the relaxed pair with
  // wait_signal_relaxed and wait_word_relaxed: every add counts once. A rank's total is read once
  // its own wait saw it, before the barrier that lets the next phase's adds come.
  const uint64_t per_phase = 10u * heap().team().size();
  static const char* const forms[3] = {"signal + wait_signal", "signal_relaxed + wait_signal", "signal_relaxed + wait_signal_relaxed"};
  for (int form = 0; form < 3; ++form) {
    uint64_t* word = b.as<uint64_t>();
    if (form == 0) signal_add_kernel<0><<<1, 64>>>(b.handle(), 10, 0, word, ok.as<bool>());
    else if (form == 1) signal_add_kernel<1><<<1, 64>>>(b.handle(), 10, per_phase, word, ok.as<bool>());
    else signal_add_kernel<2><<<1, 64>>>(b.handle(), 10, 2 * per_phase, word, ok.as<bool>());
    ctx()->synchronize(nullptr, forms[form]);
    const bool waited = download(ok.p, 1)[0];
    uint64_t v, w;
    std::memcpy(&v, download(b.signal_pad() + 5, 8).data(), 8);
    std::memcpy(&w, download(b.ptr(), 8).data(), 8);
    const uint64_t expect = per_phase * (1 + form), expect_word = form == 2 ? per_phase : 0;
    ASSERT_ALL(waited && v == expect && w == expect_word, forms[form] << ": " << (waited ? "" : "a wait timed out; ") << "slot 5 holds " << v
                                                                      << ", expected " << expect << "; the word " << w << ", expected "
                                                                      << expect_word);
    stream::barrier(b, nullptr);
    ctx()->synchronize(nullptr);
  }
  stream::barrier(b, nullptr);
  ctx()->synchronize(nullptr);
  heap().free(b);
}

TEST(DeviceApi, LLPutAndGetCarryWholeMessages) {
  // Both line formats, a warp and a block, sizes around line and vector boundaries, odd source and
  // destination offsets; every round a new flag, the output poisoned first and checked to its end.
  const int n = heap().team().size(), me = heap().team().rank(), prev = (me + n - 1) % n;
  const int rounds = 3;
  const size_t max_len = 65536 + 5, so = 3, dofs = 1;
  const size_t region = ws::ll_lines<ws::kLLNarrow>(max_len);  // lines a round (the narrow format needs the most)
  SymmetricBuffer b = heap().alloc(rounds * region * ws::kLLLineBytes);
  DeviceBuffer src(rounds * max_len + 16), out(rounds * max_len + 16), ok(sizeof(bool));
  uint64_t seed = 90;
  uint32_t flag0 = 1;
  for (int narrow = 0; narrow < 2; ++narrow)
    for (int scope : {kWarp, kBlock})
      for (size_t len : {size_t(1), size_t(7), size_t(8), size_t(12), size_t(13), size_t(100), size_t(1000), size_t(4099), size_t(32768),
                         max_len}) {
        ++seed;
        flag0 += 7 * rounds;  // (up to ~850: flags other than the first few, none past ws::kLLFlagMax)
        SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), 0, b.bytes()));  // no line carries a flag before its put
        SYMMEM_CUDA_CHECK(cudaMemset(out.p, kPoison, rounds * max_len + 16));
        upload(src.as<char>() + so, random_bytes(rounds * len, seed * 977 + me));
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        stream::barrier(b, nullptr);
        char* o = out.as<char>() + dofs;
        if (narrow)
          ll_ring_kernel<ws::kLLNarrow><<<1, 256>>>(b.handle(), scope, src.as<char>() + so, len, rounds, region, flag0, o, ok.as<bool>());
        else
          ll_ring_kernel<ws::kLLPayload><<<1, 256>>>(b.handle(), scope, src.as<char>() + so, len, rounds, region, flag0, o, ok.as<bool>());
        ctx()->synchronize(nullptr, "ll ring");
        auto got = download(o, rounds * len + 1);
        auto expect = random_bytes(rounds * len, seed * 977 + prev);
        expect.push_back(kPoison);  // nothing past the last message's end
        const bool waited = download(ok.p, 1)[0];
        ASSERT_ALL(waited && first_diff(got, expect) == -1, (narrow ? "narrow" : "wide") << " lines, " << scope_name(scope) << ", "
                                                             << len << " B a round: " << (waited ? "" : "a wait timed out; ")
                                                             << "first wrong byte at " << first_diff(got, expect));
        stream::barrier(b, nullptr);
        ctx()->synchronize(nullptr);
      }
  heap().free(b);
}

// barrier_rounds_kernel over `blocks` channels on a buffer filled with `fill`; asserts on every
// rank that no word was wrong and no barrier timed out.
static void barrier_rounds(int blocks, int threads, int rounds, int words, unsigned late_ns, uint8_t fill, const char* what) {
  const size_t bytes = sizeof(uint64_t) * blocks * heap().team().size() * words;
  SymmetricBuffer b = heap().alloc(bytes);
  SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), fill, bytes));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  stream::barrier(b, nullptr);
  DeviceBuffer errors(sizeof(int));
  SYMMEM_CUDA_CHECK(cudaMemset(errors.p, 0, sizeof(int)));
  barrier_rounds_kernel<<<blocks, threads>>>(b.handle(), rounds, words, late_ns, errors.as<int>());
  ctx()->synchronize(nullptr, what);
  int e;
  SYMMEM_CUDA_CHECK(cudaMemcpy(&e, errors.p, sizeof(int), cudaMemcpyDeviceToHost));
  ASSERT_ALL(e == 0, e << " words wrong after a barrier, or barriers that timed out (x1000)");
  heap().free(b);
}

TEST(DeviceApi, BarriersOnManyChannels) { barrier_rounds(8, 64, 50, 1, 0, 0, "multi-channel barrier"); }

// Every round's writer late (20-240 us) and 32 KiB a block a peer on a poisoned buffer.
TEST(DeviceApi, BarriersWaitedOnLongStillOrderTheData) { barrier_rounds(8, 256, 12, 4096, 20000, kPoison, "barriers waited on long"); }

// A paced wait (pauses up to 16 us) gives up once another wait's timeout raises the abort flag,
// long before its own bound (seconds): it looks every 256 polls (device/wait.cuh), ~4.3 ms at
// full pauses. Measured in session 72 (1 x H200, median of 5 = max): 1.3 ms alone on the GPU,
// 5.5-7.3 ms with 2 ranks sharing it (their time slices stretch the polls), so the median is
// asserted under 100 ms: an abort noticed, at any number of ranks a GPU the tiers run.
TEST(DeviceApi, PatientWaitGivesUpOnAnAbort) {
  SymmetricBuffer b = heap().alloc(4096);
  DeviceBuffer times(4 * sizeof(uint64_t));
  std::vector<double> latency_us;
  std::string why;
  for (int trial = 0; trial < 5 && why.empty(); ++trial) {
    SYMMEM_CUDA_CHECK(cudaMemset(times.p, 0, times.n));
    patient_abort_kernel<<<2, 32>>>(b.handle(), 7, 20ull * 1000 * 1000, times.as<uint64_t>());
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    uint64_t t[4];
    SYMMEM_CUDA_CHECK(cudaMemcpy(t, times.p, sizeof t, cudaMemcpyDeviceToHost));
    bool timed_out = false;
    try {
      ctx()->check("patient wait aborted");
    } catch (const Timeout&) {
      timed_out = true;
    }
    ctx()->reset_error();
    if (t[3] != 0) why = "the wait returned satisfied, but nobody signalled";
    else if (!timed_out) why = "the aborted wait left no record for check()";
    else if (t[1] < t[2]) why = "the wait gave up " + std::to_string((t[2] - t[1]) / 1000) + " us before the abort";
    else latency_us.push_back((t[1] - t[2]) / 1e3);
  }
  if (why.empty()) {
    std::sort(latency_us.begin(), latency_us.end());
    std::printf("[rank %d] patient wait after the abort: median %.0f us, max %.0f us\n", heap().team().rank(), latency_us[2], latency_us.back());
    if (latency_us[2] >= 100000.0) why = "median latency from the abort to the wait's return " + std::to_string(latency_us[2]) + " us (max " +
                                         std::to_string(latency_us.back()) + "): want < 100000";
  }
  heap().free(b);
  ASSERT_ALL(why.empty(), why);
}
