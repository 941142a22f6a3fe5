// The stream API, eagerly and captured in a CUDA graph, with both engines; random rounds of it between
// every pair of ranks (Stream.RandomPutsGetsAndSignalsBetweenEveryPair).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "gpu_env.hpp"

using namespace symmem;
using namespace symmem::test;

static const char* engine_name(Engine e) { return e == Engine::kSM ? "SM" : "copy engine"; }

TEST(Stream, PutSignalWaitAndGetWithBothEngines) {
  const int n = heap().team().size(), me = heap().team().rank();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const size_t cap = (size_t(4) << 20) + 64;
  SymmetricBuffer b = heap().alloc(cap + 64);
  DeviceBuffer src(cap), out(cap);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreate(&s));
  uint64_t round = 0;
  // Unaligned (plain copy kernel) and 16-byte aligned with a 7-byte tail (bulk-copy path).
  for (auto [len, off] : {std::pair<size_t, size_t>{(size_t(1) << 20) + 5, 3}, {(size_t(4) << 20) + 7, 0}})
  for (Engine e : {Engine::kSM, Engine::kCopyEngine}) {
    ++round;
    SYMMEM_CUDA_CHECK(cudaMemsetAsync(b.ptr(), kPoison, cap + 64, s));
    stream::barrier(b, s);
    upload(src.p, random_bytes(len, round * 10 + me));
    stream::put_signal(b, next, off, src.p, len, 0, 1, SignalOp::kAdd, s, e);
    stream::wait(b, 0, Cmp::kGe, round, s);
    ctx()->synchronize(s, "put_signal/wait");
    auto got = download(static_cast<char*>(b.ptr()) + off, len);
    std::ostringstream msg;
    if (first_diff(got, random_bytes(len, round * 10 + prev)) != -1) msg << "put_signal: byte " << first_diff(got, random_bytes(len, round * 10 + prev)) << " wrong; ";
    if (off > 0 && download(b.ptr(), 1)[0] != kPoison) msg << "put_signal wrote before its offset; ";
    if (download(static_cast<char*>(b.ptr()) + off + len, 1)[0] != kPoison) msg << "put_signal wrote past the end; ";
    // get the next rank's buffer, which holds my bytes.
    SYMMEM_CUDA_CHECK(cudaMemsetAsync(out.p, kPoison, len, s));
    stream::get(out.p, b, next, off, len, s, e);
    ctx()->synchronize(s, "get");
    if (first_diff(download(out.p, len), random_bytes(len, round * 10 + me)) != -1) msg << "get: wrong bytes; ";
    ASSERT_ALL(msg.str().empty(), engine_name(e) << ", " << len << " bytes: " << msg.str());
    stream::barrier(b, s);
    ctx()->synchronize(s);
  }
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
  heap().free(b);
}

TEST(Stream, CapturedInAGraphAndReplayed) {
  const int n = heap().team().size(), me = heap().team().rank();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const size_t len = 300 * 1000 + 1;
  SymmetricBuffer b = heap().alloc(2 * len);
  DeviceBuffer src(len);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t exec = capture_graph(s, [&] {
    stream::barrier(b, s);  // the previous replay's readers are done
    stream::put(b, next, 0, src.p, len, s, Engine::kSM);
    stream::put(b, next, len, src.p, len, s, Engine::kCopyEngine);
    stream::signal(b, next, 3, 1, SignalOp::kAdd, s);
    stream::barrier(b, s);
  });
  for (int replay = 1; replay <= 4; ++replay) {
    upload(src.p, random_bytes(len, 500 + replay * 16 + me));
    SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), kPoison, 2 * len));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    heap().team().barrier("poisoned");
    SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    ctx()->synchronize(s, "graph replay");
    auto expect = random_bytes(len, 500 + replay * 16 + prev);
    auto got = download(b.ptr(), 2 * len);
    uint64_t count;
    SYMMEM_CUDA_CHECK(cudaMemcpy(&count, b.signal_pad() + 3, 8, cudaMemcpyDeviceToHost));
    ASSERT_ALL(std::equal(expect.begin(), expect.end(), got.begin()) && std::equal(expect.begin(), expect.end(), got.begin() + len) &&
                   count == static_cast<uint64_t>(replay),
               "replay " << replay << ": SM part " << (std::equal(expect.begin(), expect.end(), got.begin()) ? "right" : "wrong")
                         << ", copy-engine part " << (std::equal(expect.begin(), expect.end(), got.begin() + len) ? "right" : "wrong")
                         << ", signal slot 3 holds " << count);
    heap().team().barrier("checked");
  }
  SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
  heap().free(b);
}

TEST(Stream, ArgumentsAreCheckedBeforeLaunch) {
  SymmetricBuffer b = heap().alloc(1024);
  DeviceBuffer src(4096);
  const int n = heap().team().size();
  std::string msg;
  const std::string range = attempt([&] { stream::put(b, 0, 1000, src.p, 100, nullptr); });
  if (range.find("dst_offset + bytes = 1000 + 100 runs past the symmetric buffer's 1024 bytes") == std::string::npos)
    msg += "put past the end: '" + range + "'; ";
  msg += refusal("put to rank n", [&] { stream::put(b, n, 0, src.p, 16, nullptr); });
  msg += refusal("put from null", [&] { stream::put(b, 0, 0, nullptr, 16, nullptr); });
  msg += refusal("get past the end", [&] { stream::get(src.p, b, 0, 1024, 1, nullptr); });
  msg += refusal("signal past the user slots", [&] { stream::signal(b, 0, pad::kUserSlots, 1, SignalOp::kSet, nullptr); });
  msg += refusal("wait on slot -1", [&] { stream::wait(b, -1, Cmp::kEq, 1, nullptr); });
  ASSERT_ALL(msg.empty(), msg);
  heap().free(b);
}

// Random rounds of the stream API between every pair of ranks, self included: each rank draws 1-4
// operations a round (put, put_signal, get, a bare signal), each to a random peer with either engine,
// of 0 bytes to 1.5 MiB (the copy kernel, and from 1 MiB with 16-byte alignment the bulk-copy
// unit) at any byte offset in source and destination; signals add or set (the copy engine's set is
// written by the stream itself), and each destination waits, with a comparison drawn from those
// that only the last value meets, for what every sender's signals add up to and for the last value
// each set; then a barrier, and each rank resets its slots for the next round. Every landing area
// and get output is poisoned first and checked, with the bytes on either side. Rounds run eagerly,
// then a few captured once in a CUDA graph and replayed with new data.
namespace {
// One operation of a rank. A sender r's data lands in region r of the destination, in slot j (its
// j-th operation of the round); a get reads the peer's exposed area into the getter's output j.
struct StreamOp {
  int kind;  // 0 put, 1 put_signal, 2 get, 3 signal
  int peer;
  Engine engine;
  size_t src_off, dst_off, bytes;
  SignalOp sop;
  uint64_t value;
  Cmp cmp;  // the destination's wait on this sender's slot (drawn with the sender's last signal of that kind)
};
constexpr size_t kOpBytes = size_t(2) << 20, kOpsMax = 4, kRegionBytes = kOpsMax * kOpBytes;

// Rank r's operations in round `round` (any rank regenerates any rank's).
std::vector<StreamOp> draw_stream_ops(uint64_t round, int r, int n) {
  std::mt19937_64 g(round * 1000003 + static_cast<uint64_t>(r) * 7919 + 5);
  std::vector<StreamOp> ops(1 + g() % kOpsMax);
  for (size_t j = 0; j < ops.size(); ++j) {
    StreamOp& o = ops[j];
    o.kind = static_cast<int>(g() % 4);
    o.peer = static_cast<int>(g() % n);
    o.engine = g() % 2 == 0 ? Engine::kSM : Engine::kCopyEngine;
    const int size = static_cast<int>(g() % 8);
    if (size == 0) {
      o.bytes = 0, o.src_off = g() % 64, o.dst_off = g() % 4096;
    } else if (size == 1) {  // (16-byte aligned from 1 MiB: the bulk-copy unit)
      o.bytes = (size_t(1) << 20) + 16 * (g() % (1 << 15)), o.src_off = 16 * (g() % 64), o.dst_off = 16 * (g() % 64);
    } else {
      o.bytes = 1 + g() % (size_t(1) << (g() % 18)), o.src_off = g() % 64, o.dst_off = g() % 4096;
    }
    o.sop = g() % 2 == 0 ? SignalOp::kAdd : SignalOp::kSet;
    // Adds: 1-3 each. Sets: rising within the round, so the last is the largest.
    o.value = o.sop == SignalOp::kAdd ? 1 + g() % 3 : 1000 * (j + 1) + g() % 100;
    const Cmp add_cmps[] = {Cmp::kGe, Cmp::kEq, Cmp::kGt}, set_cmps[] = {Cmp::kEq, Cmp::kGe};
    o.cmp = o.sop == SignalOp::kAdd ? add_cmps[g() % 3] : set_cmps[g() % 2];
  }
  return ops;
}
// A get's bytes: as drawn, within the exposed area and the output.
size_t get_bytes(const StreamOp& o) { return std::min(o.bytes, kOpBytes - std::max(o.src_off, o.dst_off)); }
uint64_t data_seed(uint64_t round, int r, size_t j) { return round * 4096 + static_cast<uint64_t>(r) * 16 + j + 1; }

// What a round's waits on this rank expect from sender r: the adds' sum on slot 2r, the last set on
// slot 2r + 1 (0: none), and the comparisons the sender's last signal of each kind drew.
struct Expect {
  uint64_t sum = 0, last = 0;
  Cmp add_cmp = Cmp::kGe, set_cmp = Cmp::kEq;
};
Expect expected_from(const std::vector<StreamOp>& ops, int me) {
  Expect e;
  for (const StreamOp& o : ops) {
    if (o.peer != me || (o.kind != 1 && o.kind != 3)) continue;
    if (o.sop == SignalOp::kAdd) e.sum += o.value, e.add_cmp = o.cmp;
    else e.last = o.value, e.set_cmp = o.cmp;
  }
  return e;
}
uint64_t wait_value(Cmp c, uint64_t v) { return c == Cmp::kGt ? v - 1 : v; }

// The rounds on communicator c's team (peers are team ranks), `salt` in every draw; the number
// of rounds is the world's choice, so that ranks in teams of different sizes agree as often.
// Collective over the world (agreed_step).
void stream_rounds(Communicator& c, uint64_t salt) {
  const int n = c.size(), me = c.rank();
  // [region of rank 0 .. region of rank n-1][the exposed area that peers get from]
  SymmetricBuffer b = c.alloc(n * kRegionBytes + kOpBytes);
  char* const land = static_cast<char*>(b.ptr());
  char* const exposed = land + n * kRegionBytes;
  std::vector<std::unique_ptr<DeviceBuffer>> src, out;
  for (size_t j = 0; j < kOpsMax; ++j) src.push_back(std::make_unique<DeviceBuffer>(kOpBytes)), out.push_back(std::make_unique<DeviceBuffer>(kOpBytes));
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int eager_rounds = ctx()->size() > 4 ? 24 : 40, graphs = 3, replays = 3;
  size_t counts[4] = {0, 0, 0, 0}, bulk = 0, zero = 0;
  // One round's work on s: the ops of `ops_round` (every rank's), the waits, the barrier, the resets.
  auto enqueue = [&](uint64_t ops_round) {
    stream::barrier(b, s);  // (every rank has poisoned its landing areas and exposed its data)
    const std::vector<StreamOp> mine = draw_stream_ops(ops_round, me, n);
    for (size_t j = 0; j < mine.size(); ++j) {
      const StreamOp& o = mine[j];
      const char* from = static_cast<const char*>(src[j]->p) + o.src_off;
      const size_t at = me * kRegionBytes + j * kOpBytes + o.dst_off;
      if (o.kind == 0) stream::put(b, o.peer, at, from, o.bytes, s, o.engine);
      if (o.kind == 1) stream::put_signal(b, o.peer, at, from, o.bytes, 2 * me + (o.sop == SignalOp::kSet), o.value, o.sop, s, o.engine);
      if (o.kind == 2) stream::get(static_cast<char*>(out[j]->p) + o.dst_off, b, o.peer, n * kRegionBytes + o.src_off, get_bytes(o), s, o.engine);
      if (o.kind == 3) stream::signal(b, o.peer, 2 * me + (o.sop == SignalOp::kSet), o.value, o.sop, s);
    }
    for (int r = 0; r < n; ++r) {
      const Expect e = expected_from(draw_stream_ops(ops_round, r, n), me);
      if (e.sum > 0) stream::wait(b, 2 * r, e.add_cmp, wait_value(e.add_cmp, e.sum), s);
      if (e.last > 0) stream::wait(b, 2 * r + 1, e.set_cmp, e.last, s);
    }
    stream::barrier(b, s);  // (every rank's puts and gets are done)
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < 2; ++k) stream::signal(b, me, 2 * r + k, 0, SignalOp::kSet, s);
  };
  // One round: data of `data_round` for the ops of `ops_round`, run (eagerly, or by launching
  // exec), checked on this rank.
  cudaGraphExec_t exec = nullptr;
  auto round = [&](uint64_t ops_round, uint64_t data_round, bool graph) -> std::string {
    const std::vector<StreamOp> mine = draw_stream_ops(ops_round, me, n);
    for (size_t j = 0; j < kOpsMax; ++j) {
      upload(src[j]->p, random_bytes(kOpBytes, data_seed(data_round, me, j)));
      SYMMEM_CUDA_CHECK(cudaMemset(out[j]->p, kPoison, kOpBytes));
    }
    upload(exposed, random_bytes(kOpBytes, data_seed(data_round, me, 9)));
    SYMMEM_CUDA_CHECK(cudaMemset(land, kPoison, n * kRegionBytes));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    if (!graph) enqueue(ops_round);
    else SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    ctx()->synchronize(s, "random stream round");
    for (const StreamOp& o : mine) ++counts[o.kind], bulk += o.bytes >= (size_t(1) << 20), zero += o.bytes == 0;
    // What landed here from each sender, with a byte on either side of it still poisoned.
    for (int r = 0; r < n; ++r) {
      const std::vector<StreamOp> ops = draw_stream_ops(ops_round, r, n);
      for (size_t j = 0; j < ops.size(); ++j) {
        const StreamOp& o = ops[j];
        if (o.peer != me || (o.kind != 0 && o.kind != 1)) continue;
        const size_t lo = o.dst_off > 0 ? o.dst_off - 1 : 0, hi = std::min(kOpBytes, o.dst_off + o.bytes + 1);
        const std::vector<uint8_t> got = download(land + r * kRegionBytes + j * kOpBytes + lo, hi - lo);
        const std::vector<uint8_t> want = random_bytes(kOpBytes, data_seed(data_round, r, j));
        for (size_t i = lo; i < hi; ++i) {
          const bool inside = i >= o.dst_off && i < o.dst_off + o.bytes;
          if (got[i - lo] != (inside ? want[o.src_off + i - o.dst_off] : kPoison))
            return std::string(o.kind == 0 ? "put" : "put_signal") + " from rank " + std::to_string(r) + " (its op " + std::to_string(j) + ", " +
                   engine_name(o.engine) + ", " + std::to_string(o.bytes) + " bytes from offset " + std::to_string(o.src_off) + " to " +
                   std::to_string(o.dst_off) + "): byte " + std::to_string(i) + (inside ? " wrong" : " outside it written");
        }
      }
    }
    // What this rank's gets read.
    for (size_t j = 0; j < mine.size(); ++j) {
      const StreamOp& o = mine[j];
      if (o.kind != 2) continue;
      const size_t bytes = get_bytes(o);
      const std::vector<uint8_t> got = download(out[j]->p, kOpBytes), want = random_bytes(kOpBytes, data_seed(data_round, o.peer, 9));
      for (size_t i = 0; i < kOpBytes; ++i) {
        const bool inside = i >= o.dst_off && i < o.dst_off + bytes;
        if (got[i] != (inside ? want[o.src_off + i - o.dst_off] : kPoison))
          return "get from rank " + std::to_string(o.peer) + " (op " + std::to_string(j) + ", " + engine_name(o.engine) + ", " + std::to_string(bytes) +
                 " bytes from offset " + std::to_string(o.src_off) + " to " + std::to_string(o.dst_off) + "): byte " + std::to_string(i) +
                 (inside ? " wrong" : " outside it written");
      }
    }
    // Every slot reset for the next round.
    std::vector<uint64_t> slots(2 * n);
    SYMMEM_CUDA_CHECK(cudaMemcpy(slots.data(), b.signal_pad(), slots.size() * 8, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 2 * n; ++i)
      if (slots[i] != 0) return "signal slot " + std::to_string(i) + " holds " + std::to_string(slots[i]) + " after the round's reset";
    return std::string();
  };
  std::string why;
  uint64_t next = 1 + salt;
  for (int i = 0; i < eager_rounds && why.empty(); ++i, ++next) {
    why = agreed_step([&] { return round(next, next, false); });
    if (!why.empty()) why = "eager round " + std::to_string(i) + ": " + why;
  }
  for (int gi = 0; gi < graphs && why.empty(); ++gi) {
    const uint64_t ops_round = next++;
    why = agreed_step([&] { exec = capture_graph(s, [&] { enqueue(ops_round); }); return std::string(); });
    for (int rep = 0; rep < replays && why.empty(); ++rep) {
      why = agreed_step([&] { return round(ops_round, next++, true); });
      if (!why.empty()) why = "graph " + std::to_string(gi) + ", replay " + std::to_string(rep) + ": " + why;
    }
    if (exec) SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
    exec = nullptr;
  }
  if (why.empty() && me == 0)
    std::printf("random stream (a team of %d): %d rounds ran and checked on every rank; its rank 0 issued %zu puts, %zu put_signals, %zu gets, %zu signals "
                "(%zu of 1 MiB or more, %zu of 0 bytes)\n",
                n, eager_rounds + graphs * replays, counts[0], counts[1], counts[2], counts[3], bulk, zero);
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
  c.free(b);
  ASSERT_ALL(why.empty(), why);
}
}  // namespace

TEST(Stream, RandomPutsGetsAndSignalsBetweenEveryPair) { stream_rounds(comm(), 0); }

// The same on teams of every other rank, each in reverse order of the global ranks (key -rank):
// peers, regions and slots are team ranks, and with an odd world two team sizes run at once.
TEST(Stream, RandomPutsGetsAndSignalsOnReversedTeamsOfEveryOtherRank) {
  on_parity_teams(true, [](Communicator& half) { stream_rounds(half, 1000000); });
}
