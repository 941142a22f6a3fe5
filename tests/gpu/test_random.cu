// A long random interleaving of every collective, algorithm, dtype, size and buffer kind, three
// operations back to back between host synchronisations and one random rank late, each checked
// against the host reference. Ranks draw the same sequence from one seed, so a call rejected on
// one rank (an algorithm that cannot take those buffers) must be rejected on every rank.
#include <unistd.h>

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
};

Step draw(std::mt19937_64& g, int n, size_t cap) {
  Step s{};
  const CollOp ops[] = {CollOp::kAllReduce, CollOp::kReduceScatter, CollOp::kAllGather, CollOp::kBroadcast, CollOp::kAllToAll};
  s.op = ops[g() % 5];
  const bool reducing = s.op == CollOp::kAllReduce || s.op == CollOp::kReduceScatter;
  const DataType rtypes[] = {DataType::kFloat32, DataType::kBFloat16, DataType::kInt32, DataType::kFp8E4M3, DataType::kFloat16};
  const DataType mtypes[] = {DataType::kBFloat16, DataType::kUInt8, DataType::kFloat32, DataType::kInt32};
  s.d = reducing ? rtypes[g() % 5] : mtypes[g() % 4];
  s.r = static_cast<ReduceOp>(g() % 5);
  const size_t es = dtype_size(s.d);
  const size_t max_count = cap / es / (s.op == CollOp::kAllReduce || s.op == CollOp::kBroadcast ? 1 : n);
  const int band = static_cast<int>(g() % 10);
  s.count = band < 6 ? 1 + g() % 4096 : band < 9 ? 4096 + g() % 200000 : 200000 + g() % 1000000;
  s.count = std::min(s.count, max_count);
  s.kind = static_cast<int>(g() % 4);
  const Algo algos[] = {Algo::kAuto, Algo::kAuto, Algo::kAuto, Algo::kLL, Algo::kPush, Algo::kOneShot, Algo::kTwoShot, Algo::kDirect, Algo::kNccl};
  s.algo = algos[g() % 9];
  if (s.algo == Algo::kNccl && (!have_nccl() || (reducing && (s.r != ReduceOp::kSum || s.d == DataType::kFp8E4M3)))) s.algo = Algo::kAuto;
  s.root = static_cast<int>(g() % n);
  return s;
}

}  // namespace

TEST(Random, LongInterleavingOfEveryCollective) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t cap = size_t(4) << 20;
  constexpr int kBatch = 3;
  SymmetricBuffer sym_in[kBatch], sym_out[kBatch];
  std::unique_ptr<DeviceBuffer> plain_out[kBatch], plain_in[kBatch];
  for (int b = 0; b < kBatch; ++b) {
    sym_in[b] = c.alloc(cap);
    sym_out[b] = c.alloc(cap);
    plain_in[b] = std::make_unique<DeviceBuffer>(cap);
    plain_out[b] = std::make_unique<DeviceBuffer>(cap);
  }
  std::mt19937_64 g(20261126);
  const int batches = n > 4 ? 40 : 60;
  int ran = 0, rejected = 0;
  for (int it = 0; it < batches; ++it) {
    Step steps[kBatch];
    std::vector<std::vector<std::vector<uint8_t>>> ins(kBatch);
    void* outs[kBatch] = {};
    std::string status[kBatch];
    for (int b = 0; b < kBatch; ++b) {
      Step& s = steps[b] = draw(g, n, cap);
      const bool reducing = s.op == CollOp::kAllReduce || s.op == CollOp::kReduceScatter;
      const size_t es = dtype_size(s.d);
      const size_t in_count = s.op == CollOp::kAllReduce || s.op == CollOp::kBroadcast || s.op == CollOp::kAllGather ? s.count : s.count * n;
      const uint64_t seed = uint64_t(it) * 1000 + b * 100;
      for (int r = 0; r < n; ++r)
        ins[b].push_back(reducing ? random_elems(s.d, in_count, seed + r, s.r) : random_bytes(in_count * es, seed + r));
    }
    // Enqueue the batch back to back; one random rank starts late.
    if (me == static_cast<int>(g() % n)) usleep(static_cast<useconds_t>(g() % 3000));
    else (void)g();
    for (int b = 0; b < kBatch; ++b) {
      const Step& s = steps[b];
      const size_t es = dtype_size(s.d);
      char* si = static_cast<char*>(sym_in[b].ptr());
      char* so = static_cast<char*>(sym_out[b].ptr());
      char* in = s.kind == 1 ? static_cast<char*>(plain_in[b]->p) : si;
      char* out = s.kind == 1 || s.kind == 3 ? static_cast<char*>(plain_out[b]->p) : so;
      const size_t chunk = s.count * es;
      if (s.kind == 2) {  // in place by each operation's convention, in the symmetric output
        out = s.op == CollOp::kReduceScatter ? so + me * chunk : so;
        in = s.op == CollOp::kAllGather ? so + me * chunk : so;
        if (s.op == CollOp::kAllToAll) in = si;  // no in-place form: plain symmetric
      }
      const std::vector<uint8_t>& mine = ins[b][me];
      const size_t out_bytes = s.op == CollOp::kReduceScatter ? chunk : s.op == CollOp::kAllGather || s.op == CollOp::kAllToAll ? chunk * n : chunk;
      poison(out, out_bytes);
      upload(in, mine);  // after the poison: in place, the input lies inside the output
      outs[b] = out;
      status[b] = attempt([&] {
        switch (s.op) {
          case CollOp::kAllReduce: c.all_reduce(in, out, s.count, s.d, s.r, nullptr, s.algo); break;
          case CollOp::kReduceScatter: c.reduce_scatter(in, out, s.count, s.d, s.r, nullptr, s.algo); break;
          case CollOp::kAllGather: c.all_gather(in, out, s.count, s.d, nullptr, s.algo); break;
          case CollOp::kBroadcast: c.broadcast(in, out, s.count, s.d, s.root, nullptr, s.algo); break;
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
      const std::string what = std::string(coll_name(s.op)) + " " + dtype_name(s.d) + " count " + std::to_string(s.count) + " kind " +
                               std::to_string(s.kind) + " algo " + algo_name(s.algo) + " (batch " + std::to_string(it) + ")";
      if (!status[b].empty()) continue;
      const size_t es = dtype_size(s.d), chunk = s.count * es;
      std::string why;
      if (s.op == CollOp::kAllReduce || s.op == CollOp::kReduceScatter) {
        long bad = check_reduced(s.d, s.r, ins[b], s.op == CollOp::kReduceScatter ? me * s.count : 0, download(outs[b], chunk), s.count, n, &why,
                                 steps_of(s.algo, n));
        if (bad) verdict = what + ": " + std::to_string(bad) + " wrong; " + why;
      } else if (s.op == CollOp::kBroadcast) {
        auto got = download(outs[b], chunk);
        if (!std::equal(got.begin(), got.end(), ins[b][s.root].begin())) verdict = what + ": wrong data";
      } else {
        auto got = download(outs[b], chunk * n);
        for (int r = 0; r < n && verdict.empty(); ++r) {
          const size_t from = s.op == CollOp::kAllGather ? 0 : me * chunk;
          if (!std::equal(ins[b][r].begin() + from, ins[b][r].begin() + from + chunk, got.begin() + r * chunk))
            verdict = what + ": wrong data from rank " + std::to_string(r);
        }
      }
    }
    // A rejection must be the same on every rank.
    std::string summary;
    for (int b = 0; b < kBatch; ++b) summary += status[b].empty() ? "ran;" : "rejected;";
    auto all = ctx()->world().all_gather(summary, "random batch rejections");
    for (auto& a : all)
      if (a != summary && verdict.empty()) verdict = "ranks disagree on which calls were rejected: " + summary + " here, " + a + " elsewhere";
    for (int b = 0; b < kBatch; ++b) (status[b].empty() ? ran : rejected)++;
    ASSERT_ALL(verdict.empty(), verdict);
  }
  std::printf("[rank %d] random interleaving: %d operations ran and checked, %d rejected alike on every rank\n", me, ran, rejected);
  for (int b = 0; b < kBatch; ++b) {
    c.free(sym_in[b]);
    c.free(sym_out[b]);
  }
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
