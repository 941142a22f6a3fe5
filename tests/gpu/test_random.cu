// A long random interleaving of every collective (the rooted ones, and all_to_all_v with random
// counts, zeros included), algorithm, dtype, size, buffer kind and start offset, three operations
// back to back between host synchronisations and one random rank late, each checked against the
// host reference. The offsets (any multiple of the element size below 256 bytes, zero half the
// time) reach every kernel's unaligned path: a tensor view into a symmetric buffer, for instance.
// Ranks draw the same sequence from one seed, so a call rejected on one rank (an algorithm that
// cannot take those buffers) must be rejected on every rank.
#include <unistd.h>

#include <numeric>

#include "reference.hpp"

using namespace symmem;
using namespace symmem::test;

namespace {

struct Step {
  CollOp op;
  DataType d;
  ReduceOp r;
  size_t count;
  int kind;  // 0 symmetric in/out, 1 plain, 2 in place (symmetric), 3 symmetric in, plain out
  Algo algo;
  int root;
  size_t in_off, out_off;  // bytes from the buffers' starts (the same on every rank)
  // all_to_all_v: cnt[r * n + p] elements from rank r to rank p; out_count exactly what a rank
  // receives, or the whole output buffer; recv_counts asked for or not.
  std::vector<int64_t> cnt;
  bool exact_out, want_recv_counts;
  int64_t sent(int r, int n) const { return std::accumulate(cnt.begin() + r * n, cnt.begin() + (r + 1) * n, int64_t(0)); }
  int64_t received(int p, int n) const {
    int64_t t = 0;
    for (int r = 0; r < n; ++r) t += cnt[r * n + p];
    return t;
  }
};

// Elements of rank r's input and output: count, or count a rank (coll_chunked's chunk); for
// all_to_all_v what r sends, and its out_count.
size_t in_elems(const Step& s, int n, int r) {
  if (s.op == CollOp::kAllToAllV) return s.sent(r, n);
  const bool whole = s.op == CollOp::kReduceScatter || s.op == CollOp::kAllToAll || s.op == CollOp::kScatter;
  return whole ? s.count * n : s.count;
}
size_t out_elems(const Step& s, int n, int r, size_t cap) {
  if (s.op == CollOp::kAllToAllV) return s.exact_out ? s.received(r, n) : (cap - 256) / dtype_size(s.d);
  const bool whole = s.op == CollOp::kAllGather || s.op == CollOp::kAllToAll || s.op == CollOp::kGather;
  return whole ? s.count * n : s.count;
}

Step draw(std::mt19937_64& g, int n, size_t cap, bool nccl) {
  Step s{};
  const CollOp ops[] = {CollOp::kAllReduce, CollOp::kReduceScatter, CollOp::kAllGather, CollOp::kBroadcast,
                        CollOp::kAllToAll,  CollOp::kReduce,        CollOp::kGather,    CollOp::kScatter, CollOp::kAllToAllV};
  s.op = ops[g() % 9];
  const DataType mtypes[] = {DataType::kBFloat16, DataType::kUInt8, DataType::kFloat32, DataType::kInt32, DataType::kInt64};
  s.d = coll_reducing(s.op) ? kReduceTypes[g() % (sizeof(kReduceTypes) / sizeof(kReduceTypes[0]))] : mtypes[g() % 5];
  s.r = static_cast<ReduceOp>(g() % 5);
  const size_t es = dtype_size(s.d);
  const size_t max_count = (cap - 256) / es / (coll_chunked(s.op) ? n : 1);
  const int band = static_cast<int>(g() % 10);
  s.count = band < 6 ? 1 + g() % 4096 : band < 9 ? 4096 + g() % 200000 : 200000 + g() % 1000000;
  s.count = std::min(s.count, max_count);
  s.kind = static_cast<int>(g() % 4);
  const Algo algos[] = {Algo::kAuto, Algo::kAuto, Algo::kAuto, Algo::kLL, Algo::kPush, Algo::kOneShot, Algo::kTwoShot, Algo::kDirect, Algo::kNccl};
  s.algo = algos[g() % 9];
  if (s.algo == Algo::kNccl && (!nccl || (coll_reducing(s.op) && !nccl_beside(s.d, s.r)))) s.algo = Algo::kAuto;
  s.root = static_cast<int>(g() % n);
  const bool offsets = g() % 2 == 1;
  s.in_off = offsets ? es * (g() % (256 / es)) : 0;
  s.out_off = offsets ? es * (g() % (256 / es)) : 0;
  if (s.op == CollOp::kAllToAllV) {
    // Zeros, a few KiB, and (in a third of the calls) splits past ll's 256 KiB a peer, which send
    // every rank direct; a rank's send and receive totals fit the buffers.
    const bool large = g() % 3 == 0;
    const int64_t most = static_cast<int64_t>((cap - 256) / es / n);
    s.cnt.resize(size_t(n) * n);
    for (auto& k : s.cnt) {
      const int band = static_cast<int>(g() % 8);
      k = band < 2 ? 0 : band < 7 || !large ? static_cast<int64_t>(1 + g() % 4096) : static_cast<int64_t>(4096 + g() % most);
      k = std::min(k, most);
    }
    s.exact_out = g() % 2 == 0;
    s.want_recv_counts = g() % 2 == 0;
    s.count = std::accumulate(s.cnt.begin(), s.cnt.end(), size_t(0));  // (for the messages: every rank's)
  }
  return s;
}

/// "" where the `bytes` at p still hold the poison (0xFF), else what changed.
std::string untouched(const void* p, size_t bytes) {
  const auto got = download(p, bytes);
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != 0xFF) return "a non-root's output was written at byte " + std::to_string(i);
  return "";
}

/// "" where rank me's all_to_all_v output (out_count elements at out) holds rank r's split for it
/// from every r in rank order, the poison past them, and recv_counts (where asked) what came.
std::string check_a2av(const Step& s, int n, int me, const std::vector<std::vector<uint8_t>>& ins, const void* out, size_t out_count,
                       const void* recv_counts) {
  const size_t es = dtype_size(s.d);
  const auto got = download(out, out_count * es);
  size_t at = 0;
  for (int r = 0; r < n; ++r) {
    const size_t from = std::accumulate(s.cnt.begin() + r * n, s.cnt.begin() + r * n + me, int64_t(0)) * es, len = s.cnt[r * n + me] * es;
    if (!std::equal(ins[r].begin() + from, ins[r].begin() + from + len, got.begin() + at)) return "wrong data from rank " + std::to_string(r);
    at += len;
  }
  for (; at < got.size(); ++at)
    if (got[at] != 0xFF) return "wrote past the received total at byte " + std::to_string(at);
  if (recv_counts != nullptr) {
    std::vector<int64_t> rc(n);
    SYMMEM_CUDA_CHECK(cudaMemcpy(rc.data(), recv_counts, sizeof(int64_t) * n, cudaMemcpyDeviceToHost));
    for (int r = 0; r < n; ++r)
      if (rc[r] != s.cnt[r * n + me]) return "recv_counts[" + std::to_string(r) + "] = " + std::to_string(rc[r]);
  }
  return "";
}

/// The interleaving on communicator c: `batches` batches drawn from `seed` (the same on every rank
/// of c), each rank's rejections compared with its team's; pass/fail agreed over the world.
void interleave(Communicator& c, uint64_t seed, int batches) {
  const int n = c.size(), me = c.rank();
  const size_t cap = size_t(4) << 20;
  constexpr int kBatch = 3;
  SymmetricBuffer sym_in[kBatch], sym_out[kBatch], sym_counts[kBatch];
  std::unique_ptr<DeviceBuffer> plain_out[kBatch], plain_in[kBatch], recv_counts_buf[kBatch];
  for (int b = 0; b < kBatch; ++b) {
    sym_in[b] = c.alloc(cap);
    sym_out[b] = c.alloc(cap);
    sym_counts[b] = c.alloc(sizeof(int64_t) * n);
    recv_counts_buf[b] = std::make_unique<DeviceBuffer>(sizeof(int64_t) * n);
    plain_in[b] = std::make_unique<DeviceBuffer>(cap);
    plain_out[b] = std::make_unique<DeviceBuffer>(cap);
  }
  std::mt19937_64 g(seed);
  int ran = 0, rejected = 0, offset = 0, a2av = 0;
  for (int it = 0; it < batches; ++it) {
    Step steps[kBatch];
    std::vector<std::vector<std::vector<uint8_t>>> ins(kBatch);
    void* outs[kBatch] = {};
    std::string status[kBatch];
    for (int b = 0; b < kBatch; ++b) {
      Step& s = steps[b] = draw(g, n, cap, c.has_nccl());
      const uint64_t seed = uint64_t(it) * 1000 + b * 100;
      for (int r = 0; r < n; ++r)
        ins[b].push_back(coll_reducing(s.op) ? random_elems(s.d, in_elems(s, n, r), seed + r, s.r)
                                             : random_bytes(in_elems(s, n, r) * dtype_size(s.d), seed + r));
    }
    // Enqueue the batch back to back; one random rank starts late.
    if (me == static_cast<int>(g() % n)) usleep(static_cast<useconds_t>(g() % 3000));
    else (void)g();
    for (int b = 0; b < kBatch; ++b) {
      const Step& s = steps[b];
      const size_t es = dtype_size(s.d), chunk = s.count * es;
      char* si = static_cast<char*>(sym_in[b].ptr()) + s.in_off;
      char* so = static_cast<char*>(sym_out[b].ptr()) + s.out_off;
      char* in = s.kind == 1 ? static_cast<char*>(plain_in[b]->p) + s.in_off : si;
      char* out = s.kind == 1 || s.kind == 3 ? static_cast<char*>(plain_out[b]->p) + s.out_off : so;
      if (s.kind == 2) {  // in place by each operation's convention (collectives.hpp), in the symmetric output
        in = out = so;
        if (s.op == CollOp::kReduceScatter) out = so + me * chunk;
        if (s.op == CollOp::kAllGather) in = so + me * chunk;
        if (s.op == CollOp::kGather) in = so + s.root * chunk;
        if (s.op == CollOp::kScatter) out = so + s.root * chunk;
        if (s.op == CollOp::kAllToAll || s.op == CollOp::kAllToAllV) in = si;  // no in-place form: plain symmetric
      }
      poison(out, out_elems(s, n, me, cap) * es);
      if (s.op == CollOp::kAllToAllV) {
        SYMMEM_CUDA_CHECK(cudaMemcpy(sym_counts[b].ptr(), &s.cnt[me * n], sizeof(int64_t) * n, cudaMemcpyHostToDevice));
        poison(recv_counts_buf[b]->p, sizeof(int64_t) * n);
      }
      upload(in, ins[b][me]);  // after the poison: in place, the input lies inside the output
      outs[b] = out;
      status[b] = attempt([&] {
        switch (s.op) {
          case CollOp::kAllReduce: c.all_reduce(in, out, s.count, s.d, s.r, nullptr, s.algo); break;
          case CollOp::kReduceScatter: c.reduce_scatter(in, out, s.count, s.d, s.r, nullptr, s.algo); break;
          case CollOp::kAllGather: c.all_gather(in, out, s.count, s.d, nullptr, s.algo); break;
          case CollOp::kBroadcast: c.broadcast(in, out, s.count, s.d, s.root, nullptr, s.algo); break;
          case CollOp::kReduce: c.reduce(in, out, s.count, s.d, s.r, s.root, nullptr, s.algo); break;
          case CollOp::kGather: c.gather(in, out, s.count, s.d, s.root, nullptr, s.algo); break;
          case CollOp::kScatter: c.scatter(in, out, s.count, s.d, s.root, nullptr, s.algo); break;
          case CollOp::kAllToAllV:
            c.all_to_all_v(in, out, out_elems(s, n, me, cap), sym_counts[b].as<int64_t>(),
                           s.want_recv_counts ? recv_counts_buf[b]->as<int64_t>() : nullptr, s.d, nullptr, s.algo);
            break;
          default: c.all_to_all(in, out, s.count, s.d, nullptr, s.algo); break;
        }
      });
      if (!status[b].empty()) status[b] = "rejected: " + status[b];
    }
    std::string sync = attempt([&] { ctx()->synchronize(nullptr, "random batch"); });
    // Check each operation of the batch.
    std::string verdict = sync;
    for (int b = 0; b < kBatch && verdict.empty(); ++b) {
      const Step& s = steps[b];
      const std::string what = std::string(coll_name(s.op)) + " " + dtype_name(s.d) + (coll_reducing(s.op) ? std::string(" ") + redop_name(s.r) : "") +
                               " count " + std::to_string(s.count) + " kind " + std::to_string(s.kind) + " algo " + algo_name(s.algo) +
                               " root " + std::to_string(s.root) + " offsets " + std::to_string(s.in_off) + "/" + std::to_string(s.out_off) +
                               " (batch " + std::to_string(it) + ")";
      if (!status[b].empty()) continue;
      const size_t es = dtype_size(s.d), chunk = s.count * es;
      const bool root_out = s.op != CollOp::kReduce && s.op != CollOp::kGather;  // every rank's output is written
      std::string why;
      if (!root_out && me != s.root) {
        if (s.kind != 2) why = untouched(outs[b], out_elems(s, n, me, cap) * es);  // (in place, its input lies in it)
      } else if (coll_reducing(s.op)) {
        long bad = check_reduced(s.d, s.r, ins[b], s.op == CollOp::kReduceScatter ? me * s.count : 0, download(outs[b], chunk), s.count, n, &why,
                                 steps_of(s.algo, n));
        if (bad) why = std::to_string(bad) + " wrong; " + why;
      } else if (s.op == CollOp::kAllToAllV) {
        why = check_a2av(s, n, me, ins[b], outs[b], out_elems(s, n, me, cap), s.want_recv_counts ? recv_counts_buf[b]->p : nullptr);
      } else if (s.op == CollOp::kBroadcast || s.op == CollOp::kScatter) {
        const size_t from = s.op == CollOp::kScatter ? me * chunk : 0;
        auto got = download(outs[b], chunk);
        if (!std::equal(got.begin(), got.end(), ins[b][s.root].begin() + from)) why = "wrong data";
      } else {  // all_gather, all_to_all, gather: chunk r from rank r
        auto got = download(outs[b], chunk * n);
        for (int r = 0; r < n && why.empty(); ++r) {
          const size_t from = s.op == CollOp::kAllToAll ? me * chunk : 0;
          if (!std::equal(ins[b][r].begin() + from, ins[b][r].begin() + from + chunk, got.begin() + r * chunk))
            why = "wrong data from rank " + std::to_string(r);
        }
      }
      if (!why.empty()) verdict = what + ": " + why;
    }
    // A rejection must be the same on every rank.
    std::string summary;
    for (int b = 0; b < kBatch; ++b) summary += status[b].empty() ? "ran;" : "rejected;";
    auto all = c.team().all_gather(summary, "random batch rejections");
    for (auto& a : all)
      if (a != summary && verdict.empty()) verdict = "ranks disagree on which calls were rejected: " + summary + " here, " + a + " elsewhere";
    for (int b = 0; b < kBatch; ++b) {
      (status[b].empty() ? ran : rejected)++;
      offset += status[b].empty() && (steps[b].in_off | steps[b].out_off) != 0;
      a2av += status[b].empty() && steps[b].op == CollOp::kAllToAllV;
    }
    ASSERT_ALL(verdict.empty(), verdict);
  }
  std::printf("[rank %d] random interleaving on %s (%d ranks): %d operations ran and checked (%d at an offset, %d all_to_all_v), %d rejected "
              "alike on every rank\n", ctx()->rank(), c.team().name().c_str(), n, ran, offset, a2av, rejected);
  for (int b = 0; b < kBatch; ++b) {
    c.free(sym_in[b]);
    c.free(sym_out[b]);
    c.free(sym_counts[b]);
  }
}

// Batches a run: ~20 s at 8 ranks on one H200 (every rank of the world runs the same number).
int batches_for_world() { return ctx()->size() > 4 ? 120 : 200; }

}  // namespace

TEST(Random, LongInterleavingOfEveryCollective) { interleave(comm(), 20261202, batches_for_world()); }

// The same on a team of every other rank (global ranks 0, 2, 4... and 1, 3, 5...): team ranks that
// are not global ones, heaps and workspaces of a split, and with an odd world two team sizes at
// once, each team drawing its own sequence.
TEST(Random, LongInterleavingOnTeamsOfEveryOtherRank) {
  on_parity_teams(false, [](Communicator& half) { interleave(half, 20261203, batches_for_world() / 2); });
}

// The case the issue found: an int32 LL all-reduce right after a push operation with one rank late
// (push payload once shared the LL slots and could pass for LL lines).
TEST(Random, LLAfterPushWithALateRank) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t count = 5000;
  DeviceBuffer a(count * 4), b(count * 4);
  for (int rep = 0; rep < 20; ++rep) {
    std::vector<std::vector<uint8_t>> ins;
    for (int r = 0; r < n; ++r) ins.push_back(random_elems(DataType::kInt32, count, 500 + rep * 16 + r, ReduceOp::kSum));
    upload(a.p, ins[me]);
    poison(b.p, count * 4);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    if (me == rep % n) usleep(2000);
    std::string why = attempt([&] {
      c.all_reduce(a.p, b.p, count, DataType::kInt32, ReduceOp::kSum, nullptr, Algo::kPush);
      c.all_reduce(a.p, b.p, count, DataType::kInt32, ReduceOp::kSum, nullptr, Algo::kLL);
      ctx()->synchronize(nullptr, "push then ll");
    });
    long bad = why.empty() ? check_reduced(DataType::kInt32, ReduceOp::kSum, ins, 0, download(b.p, count * 4), count, n, &why) : -1;
    ASSERT_ALL(bad == 0, "rep " << rep << ": " << bad << " wrong; " << why);
  }
}
