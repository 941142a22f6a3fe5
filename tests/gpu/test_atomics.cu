// The device API's remote atomics (p2p.cuh): every form and type from every rank onto every rank
// (their results against sums, bitwise folds and extremes computed on the host from each rank's
// random operands), tickets that must come out unique, an election by compare-swap, a chain of
// swaps, and data published by a put, a fence and an atomic. Ranks agree on each verdict.
#include <algorithm>

#include "gpu_env.hpp"
#include "symmem/device.cuh"

using namespace symmem;
using namespace symmem::test;

namespace {

constexpr int kBlocks = 4, kThreads = 128, kMaxRanks = 64;
constexpr int kTickets = kMaxRanks * kBlocks * kThreads, kCasThreads = 64;

// Deterministic operands: every rank can recompute what every other rank applied.
__host__ __device__ inline uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
__host__ __device__ inline uint64_t key(int rank, int thread, int peer, int what) {
  return mix((static_cast<uint64_t>(rank) << 40) ^ (static_cast<uint64_t>(thread) << 16) ^ (static_cast<uint64_t>(peer) << 8) ^ what);
}

// Words every rank applies atomics to on every rank (its own included).
struct Sums {
  uint32_t u32;
  int32_t s32;
  unsigned long long u64;
  long long s64;
  float f32;
  double f64;
  uint32_t cas32;
  unsigned long long cas64;
  unsigned long long or64;
  uint32_t and32;
  long long xor64;
  int32_t max_s32;
  uint32_t max_u32;
  unsigned long long min_u64;
  long long min_s64;
};
// Words on rank 0 only: the tickets, their bitmap, the election and the swap chain.
struct Shared {
  uint32_t ticket;
  int32_t elected;
  unsigned long long swapped;
  unsigned long long swap_old[kMaxRanks];
  uint32_t seen[kTickets / 32];
};
// A word each rank sets on the next one.
struct Set {
  unsigned long long u64;
  double f64;
  float f32;
};
struct Words {
  Sums sums;
  Shared shared;
  Set set;
};

// Host-side initial values (random, never zero where a sum or fold is checked).
Sums initial_sums(int rank) {
  Sums s{};
  s.u32 = static_cast<uint32_t>(key(rank, -1, 0, 1));
  s.s32 = static_cast<int32_t>(key(rank, -1, 0, 2) & 0xffffff) - 0x800000;
  s.u64 = key(rank, -1, 0, 3);
  s.s64 = static_cast<long long>(key(rank, -1, 0, 4) >> 4) - (1ll << 58);
  s.f32 = static_cast<float>(key(rank, -1, 0, 5) & 0xfffff);  // integers: every partial sum exact
  s.f64 = static_cast<double>(key(rank, -1, 0, 6) & 0xffffffff) * 0.25;
  s.cas32 = static_cast<uint32_t>(key(rank, -1, 0, 7));
  s.cas64 = key(rank, -1, 0, 8);
  s.or64 = key(rank, -1, 0, 9) & ~((1ull << kMaxRanks / 2) - 1);  // the low bits: one a rank
  s.and32 = 0xffffffffu;
  s.xor64 = static_cast<long long>(key(rank, -1, 0, 10));
  s.max_s32 = static_cast<int32_t>(key(rank, -1, 0, 11));
  s.max_u32 = static_cast<uint32_t>(key(rank, -1, 0, 12));
  s.min_u64 = key(rank, -1, 0, 13);
  s.min_s64 = static_cast<long long>(key(rank, -1, 0, 14));
  return s;
}

// What thread t of `rank` applies to `peer`'s words: one value per form (or64 and and32 unused:
// those are a rank's bit).
using Ops = Sums;
__host__ __device__ inline Ops ops_of(int rank, int t, int peer) {
  Ops o{};
  o.u32 = static_cast<uint32_t>(key(rank, t, peer, 1));  // wraps: sums are mod 2^32
  o.s32 = static_cast<int32_t>(key(rank, t, peer, 2) & 0xffff) - 0x8000;
  o.u64 = key(rank, t, peer, 3) >> 12;  // carries across 32 bits
  o.s64 = -static_cast<long long>(key(rank, t, peer, 4) >> 24);
  o.f32 = static_cast<float>(key(rank, t, peer, 5) & 0xff);
  o.f64 = static_cast<double>(key(rank, t, peer, 6) & 0xfff) * 0.5;
  o.cas32 = static_cast<uint32_t>(key(rank, t, peer, 7) & 0xff) + 1;
  o.cas64 = (key(rank, t, peer, 8) >> 8) + 1;
  o.xor64 = static_cast<long long>(key(rank, t, peer, 10));
  o.max_s32 = static_cast<int32_t>(key(rank, t, peer, 11));
  o.max_u32 = static_cast<uint32_t>(key(rank, t, peer, 12));
  o.min_u64 = key(rank, t, peer, 13);
  o.min_s64 = static_cast<long long>(key(rank, t, peer, 14));
  return o;
}

// Adds by compare-swap loops (bounded: `errors` counts a loop that never won).
template <class T>
__device__ void cas_add(const DeviceHandle& h, int peer, T* word, T v, int* errors) {
  T seen = device::atomic_fetch(h, peer, word);
  for (int tries = 0; tries < (1 << 20); ++tries) {
    const T old = device::atomic_compare_swap(h, peer, word, seen, static_cast<T>(seen + v));
    if (old == seen) return;
    seen = old;
  }
  atomicAdd(errors, 1);
}

__global__ void apply_kernel(DeviceHandle h, Words* w, int* errors) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x), me = h.rank;
  for (int i = 0; i < h.nranks; ++i) {
    const int p = (me + i) % h.nranks;  // (every rank starts at another peer)
    const Ops o = ops_of(me, t, p);
    Sums* s = &w->sums;
    device::atomic_add(h, p, &s->u32, o.u32);
    device::atomic_fetch_add(h, p, &s->s32, o.s32);
    device::atomic_fetch_add(h, p, &s->u64, o.u64);
    device::atomic_add(h, p, &s->s64, o.s64);
    device::atomic_add(h, p, &s->f32, o.f32);
    device::atomic_fetch_add(h, p, &s->f64, o.f64);
    if (t < kCasThreads) {  // (every contender's loop is a chain of round trips: a few suffice)
      cas_add(h, p, &s->cas32, o.cas32, errors);
      cas_add(h, p, &s->cas64, o.cas64, errors);
    }
    if (t == 0) {
      device::atomic_fetch_or(h, p, &s->or64, 1ull << me);
      device::atomic_fetch_and(h, p, &s->and32, ~(1u << (me % 32)));
    }
    device::atomic_fetch_xor(h, p, &s->xor64, o.xor64);
    device::atomic_fetch_max(h, p, &s->max_s32, o.max_s32);
    device::atomic_fetch_max(h, p, &s->max_u32, o.max_u32);
    device::atomic_fetch_min(h, p, &s->min_u64, o.min_u64);
    device::atomic_fetch_min(h, p, &s->min_s64, o.min_s64);
  }
  // Tickets from rank 0's counter: each must come out once (its bit in rank 0's bitmap unset before).
  Shared* sh = &w->shared;
  const uint32_t ticket = device::atomic_fetch_inc(h, 0, &sh->ticket);
  if (ticket >= static_cast<uint32_t>(kTickets)) {
    atomicAdd(errors, 1);
  } else {
    const uint32_t bit = 1u << (ticket % 32);
    if (device::atomic_fetch_or(h, 0, &sh->seen[ticket / 32], bit) & bit) atomicAdd(errors, 1);
  }
  if (t == 0) {
    // The election: only the first compare-swap from 0 wins.
    const int32_t was = device::atomic_compare_swap(h, 0, &sh->elected, 0, me + 1);
    errors[1] = was == 0;  // (this rank's claim, checked against the winner below)
    // The swap chain: each rank swaps its value in and records what it took out.
    const unsigned long long old = device::atomic_swap(h, 0, &sh->swapped, key(me, -2, 0, 20));
    device::atomic_set(h, 0, &sh->swap_old[me], old);
    // One word of each kind set on the next rank.
    const int next = (me + 1) % h.nranks;
    device::atomic_set(h, next, &w->set.u64, key(me, -3, 0, 21));
    device::atomic_set(h, next, &w->set.f64, static_cast<double>(key(me, -3, 0, 22) >> 11) * 0x1p-53);
    device::atomic_set(h, next, &w->set.f32, static_cast<float>(key(me, -3, 0, 23) >> 40) * 0x1p-24f);
  }
}

// After every rank's apply_kernel: the election's winner as rank 0 holds it.
__global__ void read_winner_kernel(DeviceHandle h, Words* w, int* out) { *out = device::atomic_fetch(h, 0, &w->shared.elected); }

// Rounds of: the block puts a round's bytes into the next rank's half (by parity), fence(), one
// atomic add of that rank's counter; waits (wait_word, acquire) for its own counter to reach the
// round, copies what landed out; then tells the previous rank (atomic_set after a fence) that its half may
// be reused and waits for the next rank's word alike. A put that the atomic could overtake shows as
// an older round's bytes.
__global__ void publish_kernel(DeviceHandle h, const char* src, size_t n, int rounds, char* out, int* errors) {
  const int next = (h.rank + 1) % h.nranks, prev = (h.rank + h.nranks - 1) % h.nranks;
  char* halves = static_cast<char*>(h.local);
  unsigned long long* arrived = reinterpret_cast<unsigned long long*>(halves + 2 * n);
  unsigned long long* freed = arrived + 1;
  __shared__ int failed;
  if (threadIdx.x == 0) failed = 0;
  __syncthreads();
  // (Two ways to read the word: wait_word's acquire for `arrived`, a relaxed atomic_fetch and a
  // fence for `freed`.)
  auto await = [&](unsigned long long* word, unsigned long long r, bool acquire) {
    if (acquire) return device::wait_word(h, reinterpret_cast<const uint64_t*>(word), Cmp::kGe, r, prev);
    const uint64_t t0 = device::global_timer_ns();
    while (device::atomic_fetch(h, h.rank, word) < r)
      if (device::global_timer_ns() - t0 > 10'000'000'000ull) return false;  // 10 s
    device::fence();
    return true;
  };
  for (int r = 1; r <= rounds; ++r) {
    char* half = halves + (r & 1) * n;
    device::put<device::BlockScope>(h, next, half, src + static_cast<size_t>(r) * n, n);
    __syncthreads();
    if (threadIdx.x == 0) {
      device::fence();
      device::atomic_add(h, next, arrived, 1ull);
      if (!await(arrived, r, true)) failed = 1;
    }
    __syncthreads();
    if (failed) break;
    device::copy_bytes(out + static_cast<size_t>(r) * n, half, n, threadIdx.x, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0) {
      device::fence();
      device::atomic_set(h, prev, freed, static_cast<unsigned long long>(r));
      if (!await(freed, r, false)) failed = 1;
    }
    __syncthreads();
    if (failed) break;
  }
  if (threadIdx.x == 0 && failed) atomicAdd(errors, 1);
}

template <class T, class U>
std::string differs(const char* what, T got, U want_as) {
  const T want = static_cast<T>(want_as);
  if (got == want) return "";
  std::ostringstream os;
  os << what << " is " << got << ", expected " << want << "; ";
  return os.str();
}

}  // namespace

TEST(DeviceAtomics, EveryFormFromEveryRankOntoEveryRank) {
  const int n = heap().team().size(), me = heap().team().rank();
  if (n > kMaxRanks) GTEST_SKIP() << "the test's words hold " << kMaxRanks << " ranks";
  SymmetricBuffer b = heap().alloc(sizeof(Words));
  Words init{};
  std::memset(&init, kPoison, sizeof(init));
  init.sums = initial_sums(me);
  std::memset(&init.shared, 0, sizeof(init.shared));  // (counters and bitmaps start at 0)
  init.shared.swapped = key(0, -2, 0, 19);
  SYMMEM_CUDA_CHECK(cudaMemcpy(b.ptr(), &init, sizeof(init), cudaMemcpyHostToDevice));
  DeviceBuffer errors(2 * sizeof(int)), winner(sizeof(int));
  SYMMEM_CUDA_CHECK(cudaMemset(errors.p, 0, 2 * sizeof(int)));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  heap().team().barrier("atomics: initial values");
  apply_kernel<<<kBlocks, kThreads>>>(b.handle(), b.as<Words>(), errors.as<int>());
  ctx()->synchronize(nullptr, "the atomics");
  heap().team().barrier("atomics: applied");
  read_winner_kernel<<<1, 1>>>(b.handle(), b.as<Words>(), winner.as<int>());
  ctx()->synchronize(nullptr, "the election's winner");
  Words got;
  SYMMEM_CUDA_CHECK(cudaMemcpy(&got, b.ptr(), sizeof(got), cudaMemcpyDeviceToHost));
  int err[2], won_by = 0;
  SYMMEM_CUDA_CHECK(cudaMemcpy(err, errors.p, sizeof(err), cudaMemcpyDeviceToHost));
  SYMMEM_CUDA_CHECK(cudaMemcpy(&won_by, winner.p, sizeof(int), cudaMemcpyDeviceToHost));

  // What every rank's threads applied to this rank, folded on the host.
  Sums want = initial_sums(me);
  const int threads = kBlocks * kThreads;
  for (int r = 0; r < n; ++r)
    for (int t = 0; t < threads; ++t) {
      const Ops o = ops_of(r, t, me);
      want.u32 += o.u32;
      want.s32 += o.s32;
      want.u64 += o.u64;
      want.s64 += o.s64;
      want.f32 += o.f32;
      want.f64 += o.f64;
      if (t < kCasThreads) {
        want.cas32 += o.cas32;
        want.cas64 += o.cas64;
      }
      want.xor64 ^= o.xor64;
      want.max_s32 = std::max(want.max_s32, o.max_s32);
      want.max_u32 = std::max(want.max_u32, o.max_u32);
      want.min_u64 = std::min(want.min_u64, o.min_u64);
      want.min_s64 = std::min(want.min_s64, o.min_s64);
    }
  uint32_t and_mask = 0;
  for (int r = 0; r < n; ++r) {
    want.or64 |= 1ull << r;
    and_mask |= 1u << (r % 32);
  }
  want.and32 &= ~and_mask;
  std::string msg = err[0] != 0 ? std::to_string(err[0]) + " tickets repeated or compare-swap loops that never won; " : "";
  const Sums& g = got.sums;
  msg += differs("u32 sum", g.u32, want.u32) + differs("s32 sum", g.s32, want.s32) + differs("u64 sum", g.u64, want.u64) +
         differs("s64 sum", g.s64, want.s64) + differs("f32 sum", g.f32, want.f32) + differs("f64 sum", g.f64, want.f64) +
         differs("u32 compare-swap sum", g.cas32, want.cas32) + differs("u64 compare-swap sum", g.cas64, want.cas64) +
         differs("or", g.or64, want.or64) + differs("and", g.and32, want.and32) + differs("xor", g.xor64, want.xor64) +
         differs("s32 max", g.max_s32, want.max_s32) + differs("u32 max", g.max_u32, want.max_u32) +
         differs("u64 min", g.min_u64, want.min_u64) + differs("s64 min", g.min_s64, want.min_s64);
  // The election: one winner, whom every rank sees, and who alone claims it.
  if (won_by < 1 || won_by > n) msg += "the election's word is " + std::to_string(won_by) + "; ";
  else if ((err[1] != 0) != (won_by == me + 1)) msg += "claims " + std::string(err[1] ? "" : "not ") + "to have won; rank 0 holds " + std::to_string(won_by) + "; ";
  // The next rank's words, set by the previous one.
  const int prev = (me + n - 1) % n;
  msg += differs("u64 set by the previous rank", got.set.u64, key(prev, -3, 0, 21)) +
         differs("f64 set by the previous rank", got.set.f64, static_cast<double>(key(prev, -3, 0, 22) >> 11) * 0x1p-53) +
         differs("f32 set by the previous rank", got.set.f32, static_cast<float>(key(prev, -3, 0, 23) >> 40) * 0x1p-24f);
  if (me == 0) {
    const Shared& s = got.shared;
    msg += differs("tickets handed out", s.ticket, static_cast<uint32_t>(n * threads));
    for (int i = 0; i < kTickets; ++i)
      if (((s.seen[i / 32] >> (i % 32)) & 1u) != (i < n * threads ? 1u : 0u)) {
        msg += "ticket " + std::to_string(i) + (i < n * threads ? " never handed out; " : " handed out past the count; ");
        break;
      }
    // The swap chain: what was taken out plus what is left = what was there plus what was put in.
    std::vector<unsigned long long> outs(s.swap_old, s.swap_old + n), ins;
    outs.push_back(s.swapped);
    ins.push_back(key(0, -2, 0, 19));
    for (int r = 0; r < n; ++r) ins.push_back(key(r, -2, 0, 20));
    std::sort(outs.begin(), outs.end());
    std::sort(ins.begin(), ins.end());
    if (outs != ins) msg += "the swaps lost or duplicated a value; ";
  }
  ASSERT_ALL(msg.empty(), msg);
  heap().team().barrier("atomics: checked");
  heap().free(b);
}

TEST(DeviceAtomics, AnAtomicAfterAFencePublishesThePutsBeforeIt) {
  const int n = heap().team().size(), me = heap().team().rank();
  const size_t len = 32 * 1024 + 16;
  const int rounds = 24;
  SymmetricBuffer b = heap().alloc(2 * len + 64);
  SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), 0, 2 * len + 64));
  DeviceBuffer src(len * (rounds + 1)), out(len * (rounds + 1)), errors(sizeof(int));
  upload(src.p, random_bytes(len * (rounds + 1), 9100 + me));
  SYMMEM_CUDA_CHECK(cudaMemset(out.p, kPoison, len * (rounds + 1)));
  SYMMEM_CUDA_CHECK(cudaMemset(errors.p, 0, sizeof(int)));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  heap().team().barrier("publish: zeroed");
  publish_kernel<<<1, 512>>>(b.handle(), src.as<char>(), len, rounds, out.as<char>(), errors.as<int>());
  std::string msg = attempt([&] { ctx()->synchronize(nullptr, "publish by atomics"); });
  int e = 0;
  SYMMEM_CUDA_CHECK(cudaMemcpy(&e, errors.p, sizeof(int), cudaMemcpyDeviceToHost));
  if (e != 0) msg += "; a wait for a peer's atomic timed out";
  const int prev = (me + n - 1) % n;
  const auto expect = random_bytes(len * (rounds + 1), 9100 + prev);
  const auto got = download(out.p, len * (rounds + 1));
  for (int r = 1; r <= rounds && msg.empty(); ++r)
    if (!std::equal(got.begin() + r * len, got.begin() + (r + 1) * len, expect.begin() + r * len))
      msg += "round " + std::to_string(r) + "'s bytes are not what the previous rank put before its atomic";
  ASSERT_ALL(msg.empty(), msg);
  heap().team().barrier("publish: checked");
  heap().free(b);
}
