// Random one-sided traffic from user kernels through the device API. Every round draws one plan
// (the same on every rank, from the round's seed) of groups of messages. A group is waited for by
// one thread of one block of its receiver; each of its messages is sent by a thread, a warp or a
// block of its sender, in one of the forms the device API documents for publishing data:
//   put_signal (set or add); put, fence() and signal_relaxed (a thread); a pull (the sender writes
//   its own exposed area and signals, the receiver gets it); a bare signal (released or relaxed);
//   put, then fence() and a remote atomic add, fetching or not, waited for with wait_word; LL lines
//   (narrow or wide), waited for by ll_get.
// Sizes 0 B - 128 KiB at any byte offset, to any peer (itself too), several senders into one slot
// or word, waits by acquire or by relaxed polls and then fence(). After the round every rank checks
// its whole buffer (landing areas, exposed areas, words; the poison between them), its output, its
// signal slots and, for the fetching adds, that the values fetched from each word are the running
// sums of one order of its adds. On the world and on split teams in reverse order.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

#include "gpu_env.hpp"
#include "symmem/device.cuh"

using namespace symmem;
using namespace symmem::test;

namespace {

enum Form : int { kPutSignal = 0, kFenceRelaxed, kPull, kSignalOnly, kAtomic, kLL, kForms };
enum Kind : int { kSetSlot = 0, kAddSlot, kWord, kLines };
enum Scope : int { kThread = 0, kWarp, kBlock };

struct Msg {
  int sender, receiver, block, scope, lane, form;
  int rscope;   // kPull and kLL: the receiver's get / ll_get by warp 0 (kWarp) or the block
  int narrow;   // kLL: narrow lines
  int relaxed;  // kSignalOnly: signal_relaxed instead of signal
  int fetch;    // kAtomic: index into the sender's fetched values (atomic_fetch_add), or -1 (atomic_add)
  int slot;     // kSetSlot, kAddSlot: the receiver's signal slot
  SignalOp op;
  uint32_t flag;  // kLL
  uint64_t n, src_off, land_off, out_off, value, word_off;
};
struct Group {
  int receiver, block, kind, waiter;
  int poll;  // 0: wait_signal / wait_word (acquire); 1: their relaxed forms, then fence()
  int slot, first, count, peer;
  Cmp cmp;
  uint64_t wait_value, word_off;
};

constexpr size_t kSrcBytes = 512 * 1024;   // each rank's source data
constexpr size_t kBufBytes = 4u << 20;     // the symmetric buffer; the output has its size and layout
constexpr size_t kWordArea = 4096;         // [0, 4096) of the buffer: the words (zeroed)
constexpr size_t kNone = std::numeric_limits<size_t>::max();

// The bytes of a kLL message's lines.
size_t ll_bytes(const Msg& m) { return ws::kLLLineBytes * (m.narrow ? ws::ll_lines<ws::kLLNarrow>(m.n) : ws::ll_lines<ws::kLLPayload>(m.n)); }

struct Plan {
  std::vector<Msg> msgs;
  std::vector<Group> groups;
  std::vector<int> blocks, threads;  // a team rank's grid
};

Plan draw_plan(uint64_t round, int n) {
  std::mt19937_64 g(round * 0x2545F4914F6CDD1Dull + 7);
  Plan p;
  for (int r = 0; r < n; ++r) p.blocks.push_back(1 + static_cast<int>(g() % 6)), p.threads.push_back(32 * (1 + static_cast<int>(g() % 16)));
  std::vector<size_t> top(n, kWordArea + g() % 64);
  std::vector<int> slots(n, 0), words(n, 0), fetches(n, 0);
  // `bytes` at a 16-byte boundary plus `mis` in rank r's buffer, then a gap of poison; kNone when full.
  auto take = [&](int r, size_t bytes, size_t mis) -> size_t {
    const size_t at = (top[r] + 15) / 16 * 16 + mis;
    if (at + bytes + 64 > kBufBytes) return kNone;
    top[r] = at + bytes + 1 + g() % 48;
    return at;
  };
  const int ngroups = 3 + static_cast<int>(g() % std::min(40, 8 + 4 * n));  // (a few a receiver and round)
  for (int gi = 0; gi < ngroups; ++gi) {
    Group gr{};
    gr.receiver = static_cast<int>(g() % n);
    gr.block = static_cast<int>(g() % p.blocks[gr.receiver]);
    gr.kind = static_cast<int>(g() % 4);
    gr.waiter = static_cast<int>(g() % p.threads[gr.receiver]);
    gr.poll = static_cast<int>(g() % 2);
    gr.first = static_cast<int>(p.msgs.size());
    gr.count = gr.kind == kAddSlot || gr.kind == kWord ? 1 + static_cast<int>(g() % 4) : 1;
    gr.slot = gr.kind == kSetSlot || gr.kind == kAddSlot ? slots[gr.receiver]++ : -1;
    gr.word_off = gr.kind == kWord ? 8 * static_cast<uint64_t>(words[gr.receiver]++) : 0;
    const bool fetching = g() % 2 == 0;
    uint64_t sum = 0;
    for (int k = 0; k < gr.count; ++k) {
      Msg m{};
      m.receiver = gr.receiver;
      m.sender = static_cast<int>(g() % n);
      m.block = static_cast<int>(g() % p.blocks[m.sender]);
      m.slot = gr.slot, m.word_off = gr.word_off, m.fetch = -1;
      if (gr.kind == kSetSlot) m.form = static_cast<int>(g() % 3);  // put_signal, fence + relaxed, pull
      else if (gr.kind == kAddSlot) m.form = static_cast<int>(g() % 4);  // ... or a bare signal
      else m.form = gr.kind == kWord ? kAtomic : kLL;
      m.scope = m.form == kFenceRelaxed || m.form == kSignalOnly ? kThread : m.form == kLL ? kWarp + static_cast<int>(g() % 2)
                                                                                           : static_cast<int>(g() % 3);
      m.lane = m.scope == kThread ? static_cast<int>(g() % p.threads[m.sender]) : m.scope == kWarp ? static_cast<int>(g() % (p.threads[m.sender] / 32)) : 0;
      m.rscope = kWarp + static_cast<int>(g() % 2);
      m.narrow = static_cast<int>(g() % 2);
      m.relaxed = static_cast<int>(g() % 2);
      const int bits = m.form == kLL ? (m.narrow ? 15 : 16) : m.scope == kThread ? 12 : m.scope == kWarp ? 16 : 17;
      m.n = m.form == kSignalOnly ? 0 : g() % (1 + (uint64_t(1) << (g() % (bits + 1))));
      m.src_off = g() % (kSrcBytes - m.n + 1);
      if (m.form == kPull) {
        m.land_off = take(m.sender, m.n, g() % 16);  // exposed in the sender's buffer
        m.out_off = m.land_off == kNone ? kNone : take(m.receiver, m.n, g() % 16);
      } else if (m.form == kLL) {
        m.land_off = take(m.receiver, ll_bytes(m), 0);
        m.out_off = m.land_off == kNone ? kNone : take(m.receiver, m.n, g() % 16);
        m.flag = 1 + static_cast<uint32_t>(g() % ws::kLLFlagMax);
      } else {
        m.land_off = m.out_off = take(m.receiver, m.n, g() % 16);
      }
      if (m.land_off == kNone || m.out_off == kNone) m.n = 0, m.land_off = m.out_off = kWordArea;  // (full: no bytes)
      m.op = gr.kind == kSetSlot ? SignalOp::kSet : SignalOp::kAdd;
      m.value = gr.kind == kSetSlot ? 1 + g() % (uint64_t(1) << 48) : 1 + g() % 1000;
      if (gr.kind == kWord && fetching) m.fetch = fetches[m.sender]++;
      sum += m.value;
      p.msgs.push_back(m);
    }
    gr.peer = gr.count == 1 ? p.msgs[gr.first].sender : -1;
    // Comparisons that only the group's final value meets (a set slot is written once).
    const uint64_t v = gr.kind == kSetSlot ? p.msgs[gr.first].value : sum;
    const int c = static_cast<int>(g() % (gr.kind == kSetSlot ? 4 : 3));
    gr.cmp = c == 0 ? Cmp::kEq : c == 1 ? Cmp::kGe : c == 2 ? Cmp::kGt : Cmp::kNe;
    gr.wait_value = c == 2 ? v - 1 : c == 3 ? 0 : v;
    p.groups.push_back(gr);
  }
  return p;
}

template <class S>
__device__ void send_as(const DeviceHandle& h, const Msg& m, const char* src, uint64_t* fetched) {
  char* const local = static_cast<char*>(h.local);
  const char* const from = src + m.src_off;
  switch (m.form) {
    case kPutSignal: device::put_signal<S>(h, m.receiver, local + m.land_off, from, m.n, m.slot, m.value, m.op); break;
    case kFenceRelaxed:  // (a thread: its fence orders its own puts before its relaxed signal)
      device::put<S>(h, m.receiver, local + m.land_off, from, m.n);
      device::fence();
      device::signal_relaxed(h, m.receiver, m.slot, m.value, m.op);
      break;
    case kPull:
      device::copy_bytes(local + m.land_off, from, m.n, S::index(), S::size());
      S::sync();
      if (S::index() == 0) device::signal(h, m.receiver, m.slot, m.value, m.op);
      break;
    case kSignalOnly:
      if (m.relaxed) device::signal_relaxed(h, m.receiver, m.slot, m.value, m.op);
      else device::signal(h, m.receiver, m.slot, m.value, m.op);
      break;
    case kAtomic:
      device::put<S>(h, m.receiver, local + m.land_off, from, m.n);
      S::sync();
      if (S::index() == 0) {
        device::fence();
        uint64_t* w = reinterpret_cast<uint64_t*>(local + m.word_off);
        if (m.fetch >= 0) fetched[m.fetch] = device::atomic_fetch_add(h, m.receiver, w, m.value);
        else device::atomic_add(h, m.receiver, w, m.value);
      }
      break;
    default: {
      device::LLLine* lines = device::peer_ptr(h, m.receiver, reinterpret_cast<device::LLLine*>(local + m.land_off));
      if (m.narrow) device::ll_put<ws::kLLNarrow>(lines, from, m.n, m.flag, S::index(), S::size());
      else device::ll_put<ws::kLLPayload>(lines, from, m.n, m.flag, S::index(), S::size());
    }
  }
}

template <class S>
__device__ bool receive_ll(const DeviceHandle& h, const Msg& m, char* out) {
  const device::LLLine* lines = reinterpret_cast<const device::LLLine*>(static_cast<char*>(h.local) + m.land_off);
  if (m.narrow) return device::ll_get<ws::kLLNarrow>(h, lines, out + m.out_off, m.n, m.flag, m.sender, S::index(), S::size());
  return device::ll_get<ws::kLLPayload>(h, lines, out + m.out_off, m.n, m.flag, m.sender, S::index(), S::size());
}

// One group on its receiver's block: the wait, then each message's bytes copied (or got) to the
// output at its out_off.
__device__ void receive(const DeviceHandle& h, const Group& gr, const Msg* msgs, char* out, int* bad) {
  __shared__ int ok;
  char* const local = static_cast<char*>(h.local);
  if (gr.kind == kLines) {
    const Msg& m = msgs[gr.first];
    bool got = true;
    if (m.rscope == kBlock) got = receive_ll<device::BlockScope>(h, m, out);
    else if (threadIdx.x < 32) got = receive_ll<device::WarpScope>(h, m, out);
    if (!got) atomicAdd(bad, 1);
    return;
  }
  if (threadIdx.x == 0) ok = 1;
  __syncthreads();
  if (static_cast<int>(threadIdx.x) == gr.waiter) {
    bool w;
    if (gr.kind == kWord) {
      const uint64_t* word = reinterpret_cast<const uint64_t*>(local + gr.word_off);
      w = gr.poll == 0 ? device::wait_word(h, word, gr.cmp, gr.wait_value, gr.peer) : device::wait_word_relaxed(h, word, gr.cmp, gr.wait_value, gr.peer);
    } else {
      w = gr.poll == 0 ? device::wait_signal(h, gr.slot, gr.cmp, gr.wait_value, gr.peer)
                       : device::wait_signal_relaxed(h, gr.slot, gr.cmp, gr.wait_value, gr.peer);
    }
    if (gr.poll == 1) device::fence();  // (the signallers released: this acquires what they published)
    if (!w) ok = 0, atomicAdd(bad, 1);
  }
  __syncthreads();
  if (!ok) return;
  for (int k = 0; k < gr.count; ++k) {
    const Msg& m = msgs[gr.first + k];
    if (m.form != kPull) device::copy_bytes(out + m.out_off, local + m.land_off, m.n, threadIdx.x, blockDim.x);
    else if (m.rscope == kBlock) device::get<device::BlockScope>(h, m.sender, out + m.out_off, local + m.land_off, m.n);
    else if (threadIdx.x < 32) device::get<device::WarpScope>(h, m.sender, out + m.out_off, local + m.land_off, m.n);
  }
}

// Every block sends its messages first (no send waits), then waits for its groups: every wait's
// senders have nothing to wait for before they send, whatever the order of blocks and ranks.
__global__ void random_traffic_kernel(DeviceHandle h, const Msg* msgs, int nmsgs, const Group* groups, int ngroups, const char* src, char* out,
                                      uint64_t* fetched, int* bad) {
  const int me = h.rank, block = static_cast<int>(blockIdx.x), warp = static_cast<int>(threadIdx.x >> 5);
  for (int i = 0; i < nmsgs; ++i) {
    const Msg& m = msgs[i];
    if (m.sender != me || m.block != block) continue;
    if (m.scope == kThread) {
      if (static_cast<int>(threadIdx.x) == m.lane) send_as<device::ThreadScope>(h, m, src, fetched);
    } else if (m.scope == kWarp) {
      if (warp == m.lane) send_as<device::WarpScope>(h, m, src, fetched);
    } else {
      send_as<device::BlockScope>(h, m, src, fetched);
    }
    __syncthreads();
  }
  for (int i = 0; i < ngroups; ++i) {
    const Group& gr = groups[i];
    if (gr.receiver != me || gr.block != block) continue;
    receive(h, gr, msgs, out, bad);
    __syncthreads();
  }
}

uint64_t src_seed(uint64_t round, int r) { return round * 257 + static_cast<uint64_t>(r) + 11; }

template <class T>
std::unique_ptr<DeviceBuffer> to_device(const std::vector<T>& v) {
  auto d = std::make_unique<DeviceBuffer>(std::max<size_t>(1, v.size()) * sizeof(T));
  if (!v.empty()) SYMMEM_CUDA_CHECK(cudaMemcpy(d->p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

const char* const kFormNames[kForms] = {"put_signal", "put + fence + signal_relaxed", "pulls", "bare signals", "put + fence + atomic adds", "LL puts"};

// The rounds on communicator c's team (peers, senders and receivers are team ranks), `salt` in
// every draw. Collective over the world (agreed_step).
void traffic_rounds(Communicator& c, uint64_t salt) {
  const int n = c.size(), me = c.rank();
  SymmetricBuffer b = c.alloc(kBufBytes);
  DeviceBuffer src(kSrcBytes), out(kBufBytes), fetched(1024 * 8), bad(sizeof(int));
  const int rounds = ctx()->size() > 4 ? 32 : 48;
  size_t forms[kForms] = {}, scopes[3] = {}, bytes = 0, self = 0, narrow = 0, relaxed_polls = 0, fetching = 0, shared_groups = 0;
  auto round = [&](uint64_t r) -> std::string {
    const Plan p = draw_plan(r + salt, n);
    // Run it (what threw is reported after the exchange below, which every rank takes part in).
    const std::string threw = attempt([&] {
      SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), kPoison, kBufBytes));
      SYMMEM_CUDA_CHECK(cudaMemset(b.ptr(), 0, kWordArea));
      for (const Msg& m : p.msgs)  // (LL lines hold no flag before their put)
        if (m.form == kLL && m.receiver == me) SYMMEM_CUDA_CHECK(cudaMemset(static_cast<char*>(b.ptr()) + m.land_off, 0, ll_bytes(m)));
      SYMMEM_CUDA_CHECK(cudaMemset(b.signal_pad(), 0, pad::kUserSlots * 8));
      SYMMEM_CUDA_CHECK(cudaMemset(out.p, kPoison, kBufBytes));
      SYMMEM_CUDA_CHECK(cudaMemset(fetched.p, 0xFF, fetched.n));
      SYMMEM_CUDA_CHECK(cudaMemset(bad.p, 0, sizeof(int)));
      upload(src.p, random_bytes(kSrcBytes, src_seed(r + salt, me)));
      auto dm = to_device(p.msgs);
      auto dg = to_device(p.groups);
      SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
      stream::barrier(b, nullptr);  // (every rank's buffer is ready before any peer writes to it)
      random_traffic_kernel<<<p.blocks[me], p.threads[me]>>>(b.handle(), dm->as<Msg>(), static_cast<int>(p.msgs.size()), dg->as<Group>(),
                                                            static_cast<int>(p.groups.size()), src.as<char>(), out.as<char>(), fetched.as<uint64_t>(),
                                                            bad.as<int>());
      SYMMEM_CUDA_CHECK(cudaGetLastError());
      stream::barrier(b, nullptr);  // (every rank's sends and gets are done)
      ctx()->synchronize(nullptr, "random device traffic");
    });
    // Every rank's fetched values, for the checks of the words it received.
    std::vector<uint64_t> mine(1024, 0);
    if (threw.empty()) SYMMEM_CUDA_CHECK(cudaMemcpy(mine.data(), fetched.p, mine.size() * 8, cudaMemcpyDeviceToHost));
    const std::string blob(threw.empty() ? std::string(reinterpret_cast<const char*>(mine.data()), mine.size() * 8) : std::string());
    const std::vector<std::string> all = c.team().all_gather(blob, "random device traffic: fetched values");
    if (!threw.empty()) return threw;
    for (int q = 0; q < n; ++q)
      if (all[q].size() != mine.size() * 8) return "rank " + std::to_string(q) + " of the team failed its round";
    if (download(bad.p, sizeof(int)) != std::vector<uint8_t>(sizeof(int), 0)) return "a wait in the kernel gave up";

    // The expected buffer, output and slots of this rank.
    std::vector<std::vector<uint8_t>> srcs(n);
    auto data = [&](const Msg& m) -> const uint8_t* {
      if (srcs[m.sender].empty()) srcs[m.sender] = random_bytes(kSrcBytes, src_seed(r + salt, m.sender));
      return srcs[m.sender].data() + m.src_off;
    };
    std::vector<uint8_t> want_buf(kBufBytes, kPoison), care(kBufBytes, 1), want_out(kBufBytes, kPoison);
    std::fill(want_buf.begin(), want_buf.begin() + kWordArea, 0);
    std::vector<uint64_t> want_slots(pad::kUserSlots, 0);
    for (const Group& gr : p.groups) {
      uint64_t sum = 0;
      std::vector<std::pair<uint64_t, uint64_t>> fetched_adds;  // (fetched, added)
      for (int k = 0; k < gr.count; ++k) {
        const Msg& m = p.msgs[gr.first + k];
        sum += m.value;
        if (m.form == kPull && m.sender == me) std::copy(data(m), data(m) + m.n, want_buf.begin() + m.land_off);
        if (m.receiver != me) continue;
        if (m.form == kLL) std::fill(care.begin() + m.land_off, care.begin() + m.land_off + ll_bytes(m), 0);  // (the lines: not checked)
        else if (m.form != kPull) std::copy(data(m), data(m) + m.n, want_buf.begin() + m.land_off);
        std::copy(data(m), data(m) + m.n, want_out.begin() + m.out_off);
        if (m.fetch >= 0) {
          uint64_t f;
          std::memcpy(&f, all[m.sender].data() + 8 * m.fetch, 8);
          fetched_adds.push_back({f, m.value});
        }
      }
      if (gr.receiver != me) continue;
      if (gr.kind == kSetSlot || gr.kind == kAddSlot) want_slots[gr.slot] = gr.kind == kSetSlot ? p.msgs[gr.first].value : sum;
      if (gr.kind == kWord) std::memcpy(want_buf.data() + gr.word_off, &sum, 8);
      // The fetching adds of one word: sorted by what they fetched, each fetched the sum of those before.
      std::sort(fetched_adds.begin(), fetched_adds.end());
      uint64_t run = 0;
      for (const auto& [f, v] : fetched_adds) {
        if (f != run)
          return "word " + std::to_string(gr.word_off / 8) + ": the fetching adds fetched " + std::to_string(f) + " where the adds before it sum to " +
                 std::to_string(run);
        run += v;
      }
    }
    const std::vector<uint8_t> got_buf = download(b.ptr(), kBufBytes), got_out = download(out.p, kBufBytes);
    for (size_t i = 0; i < kBufBytes; ++i)
      if (care[i] && got_buf[i] != want_buf[i]) {
        for (const Msg& m : p.msgs)
          if ((m.receiver == me || m.sender == me) && i >= m.land_off && i < m.land_off + m.n)
            return std::string("the buffer's byte ") + std::to_string(i) + " (in the area of " + kFormNames[m.form] + " from rank " +
                   std::to_string(m.sender) + " to " + std::to_string(m.receiver) + ", " + std::to_string(m.n) + " bytes) is wrong";
        return "the buffer's byte " + std::to_string(i) + (i < kWordArea ? " (a word)" : " (poison)") + " is wrong";
      }
    for (size_t i = 0; i < kBufBytes; ++i)
      if (got_out[i] != want_out[i]) {
        for (const Msg& m : p.msgs)
          if (m.receiver == me && i >= m.out_off && i < m.out_off + m.n)
            return std::string("the output's byte ") + std::to_string(i) + " (of " + kFormNames[m.form] + " from rank " + std::to_string(m.sender) + ", " +
                   std::to_string(m.n) + " bytes, scope " + std::to_string(m.scope) + ") is wrong";
        return "the output's byte " + std::to_string(i) + " (poison) was written";
      }
    std::vector<uint64_t> slots(pad::kUserSlots);
    SYMMEM_CUDA_CHECK(cudaMemcpy(slots.data(), b.signal_pad(), slots.size() * 8, cudaMemcpyDeviceToHost));
    for (int i = 0; i < pad::kUserSlots; ++i)
      if (slots[i] != want_slots[i]) return "signal slot " + std::to_string(i) + " holds " + std::to_string(slots[i]) + ", want " + std::to_string(want_slots[i]);
    for (const Msg& m : p.msgs)
      if (m.sender == me) ++forms[m.form], ++scopes[m.scope], bytes += m.n, self += m.receiver == me, narrow += m.form == kLL && m.narrow, fetching += m.fetch >= 0;
    for (const Group& gr : p.groups)
      if (gr.receiver == me) relaxed_polls += gr.kind != kLines && gr.poll == 1, shared_groups += gr.count > 1;
    return std::string();
  };
  std::string why;
  for (int i = 0; i < rounds && why.empty(); ++i) {
    why = agreed_step([&] { return round(static_cast<uint64_t>(i) + 1); });
    if (!why.empty()) why = "round " + std::to_string(i) + ": " + why;
  }
  if (why.empty() && me == 0) {
    std::printf("random device traffic (a team of %d): %d rounds ran and checked on every rank; its rank 0 sent", n, rounds);
    for (int f = 0; f < kForms; ++f) std::printf(" %zu %s,", forms[f], kFormNames[f]);
    std::printf(" (%zu by a thread, %zu a warp, %zu a block; %zu to itself; %zu narrow LL; %zu fetching adds; %zu bytes) and waited %zu times by "
                "relaxed polls, on %zu groups of several senders\n",
                scopes[0], scopes[1], scopes[2], self, narrow, fetching, bytes, relaxed_polls, shared_groups);
  }
  c.free(b);
  ASSERT_ALL(why.empty(), why);
}

}  // namespace

TEST(DeviceApi, RandomTrafficFromUserKernels) { traffic_rounds(comm(), 0); }

// The same on teams of every other rank, each in reverse order of the global ranks.
TEST(DeviceApi, RandomTrafficFromUserKernelsOnReversedTeamsOfEveryOtherRank) {
  on_parity_teams(true, [](Communicator& half) { traffic_rounds(half, 1000000); });
}
