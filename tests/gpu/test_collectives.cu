// Collectives against host references on random data: every dtype and reduction, sizes that hit
// the tails, every algorithm that can run with the given buffers; outputs poisoned first.
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "reference.hpp"

using namespace symmem;
using namespace symmem::test;

namespace {

const size_t kCounts[] = {1, 7, 33, 4099, 65537};

}  // namespace

TEST(Collectives, AllReduceEveryTypeOpAlgorithmAndTail) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t cap = (size_t(1) << 20) * 4 + 64;
  SymmetricBuffer in = c.alloc(cap), out = c.alloc(cap);
  DeviceBuffer plain_in(cap), plain_out(cap);
  uint64_t seed = 0;
  for (DataType d : kReduceTypes)
    for (ReduceOp op : kOps)
      for (size_t count : kCounts) {
        ++seed;
        const size_t bytes = count * dtype_size(d);
        std::vector<std::vector<uint8_t>> ins;
        for (int r = 0; r < n; ++r) ins.push_back(random_elems(d, count, seed * 64 + r, op));
        std::vector<std::pair<Algo, bool>> runs = {{Algo::kLL, false}, {Algo::kPush, false}, {Algo::kOneShot, true},
                                                   {Algo::kTwoShot, true}, {Algo::kAuto, true}, {Algo::kAuto, false}};
        if (n == 2) runs.push_back({Algo::kTwoShotPush, true});
        // NCCL (the fallback's wiring) where NCCL supports the pair; for integers every op, whose
        // results symmem defines as NCCL's (an average divides the sum wrapped in the type).
        if (have_nccl() && nccl_beside(d, op)) runs.push_back({Algo::kNccl, false});
        for (const auto& run_ : runs) {
          // (named copies: a lambda may not capture structured bindings before C++20)
          const auto algo = run_.first;
          const auto sym = run_.second;
          void* ip = sym ? in.ptr() : plain_in.p;
          void* op_ = sym ? out.ptr() : plain_out.p;
          upload(ip, ins[me]);
          poison(op_, bytes);
          SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
          std::string why = attempt([&] {
            c.all_reduce(ip, op_, count, d, op, nullptr, algo);
            ctx()->synchronize(nullptr, "all_reduce");
          });
          long bad = why.empty() ? check_reduced(d, op, ins, 0, download(op_, bytes), count, n, &why, steps_of(algo, n)) : -1;
          ASSERT_ALL(bad == 0, "all_reduce " << dtype_name(d) << " " << redop_name(op) << " count " << count << " algo "
                                             << algo_name(algo) << (sym ? " symmetric" : " plain") << ": " << bad
                                             << " wrong; " << why);
        }
      }
  c.free(in);
  c.free(out);
}

// LL all-reduce past 256 KiB runs two-shot at 3+ ranks (detail::ll_two_shot_chunk): chunks of whole
// words, a short last chunk, every dtype width, in place and out, ordinary and symmetric buffers.
// 8-byte types run one-shot in narrow lines at every size (detail::ll_narrow_only), up to two
// thirds of the slot (detail::ll_capacity_for), where LL refuses them.
TEST(Collectives, AllReduceLLTwoShot) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t cap = size_t(1) << 20;
  SymmetricBuffer in = c.alloc(cap), out = c.alloc(cap);
  DeviceBuffer plain_in(cap), plain_out(cap);
  uint64_t seed = 500;
  for (DataType d : {DataType::kBFloat16, DataType::kFloat32, DataType::kFp8E4M3, DataType::kInt32, DataType::kInt64, DataType::kFloat64})
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax})
      for (size_t bytes : {size_t(256 * 1024 + 8), size_t(600006), size_t(1) << 20}) {
        const size_t count = bytes / dtype_size(d);
        ++seed;
        if (count * dtype_size(d) > detail::ll_capacity_for(CollOp::kAllReduce, d, CommOptions{}.ll_max_bytes)) {
          const std::string why = attempt([&] { c.all_reduce(in.ptr(), out.ptr(), count, d, op, nullptr, Algo::kLL); });
          ASSERT_ALL(why.find("8-byte lines") != std::string::npos, "ll all_reduce " << dtype_name(d) << " count " << count
                                                                   << " past LL's capacity: " << (why.empty() ? "accepted" : why));
          continue;
        }
        std::vector<std::vector<uint8_t>> ins;
        for (int r = 0; r < n; ++r) ins.push_back(random_elems(d, count, seed * 64 + r, op));
        for (int mode = 0; mode < 3; ++mode) {  // symmetric out of place, ordinary, in place
          void* ip = mode == 1 ? plain_in.p : in.ptr();
          void* op_ = mode == 1 ? plain_out.p : mode == 2 ? ip : out.ptr();
          upload(ip, ins[me]);
          if (mode != 2) poison(op_, count * dtype_size(d));
          SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
          std::string why = attempt([&] {
            c.all_reduce(ip, op_, count, d, op, nullptr, Algo::kLL);
            ctx()->synchronize(nullptr, "all_reduce ll two-shot");
          });
          long bad = why.empty() ? check_reduced(d, op, ins, 0, download(op_, count * dtype_size(d)), count, n, &why, 1) : -1;
          ASSERT_ALL(bad == 0, "ll all_reduce " << dtype_name(d) << " " << redop_name(op) << " count " << count << " mode " << mode << ": "
                                                << bad << " wrong; " << why);
        }
      }
  c.free(in);
  c.free(out);
}

// The LL flag wraps every 65535 operations (16 bits, include/symmem/device/workspace.hpp); the two
// operations at its last values zero the slots. Without that, a large LL operation 2 x 65535
// operations after another large one, with only one-line operations between, would find the old
// operation's lines (same parity, same flag) past the first line and take them for its peers'.
TEST(Collectives, LLFlagWrapCleansTheSlots) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks or more";
  // 131070 operations: ~1 s where every rank has a GPU of its own; where ranks share one, each LL
  // operation waits for the GPU's time slices (2 ranks on 1 GPU: over 280 s), so it is left out there.
  if (c.shares_gpu()) GTEST_SKIP() << "ranks share a GPU: 131070 operations would take minutes";
  const DataType d = DataType::kInt32;
  const size_t count = 16384;  // 64 KiB: one-shot LL, 5462 lines a peer
  SymmetricBuffer in = c.alloc(count * 4), out = c.alloc(count * 4), small = c.alloc(64);
  std::vector<std::vector<uint8_t>> first, second;
  for (int r = 0; r < n; ++r) {
    first.push_back(random_elems(d, count, 7100 + r, ReduceOp::kSum));
    second.push_back(random_elems(d, count, 7200 + r, ReduceOp::kSum));
  }
  upload(in.ptr(), first[me]);
  SYMMEM_CUDA_CHECK(cudaMemset(small.ptr(), 1, 64));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  std::string why = attempt([&] {
    c.all_reduce(in.ptr(), out.ptr(), count, d, ReduceOp::kSum, nullptr, Algo::kLL);
    ctx()->synchronize(nullptr, "first large all_reduce");
    upload(in.ptr(), second[me]);
    poison(out.ptr(), count * 4);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    const int between = 2 * 0xFFFF - 1;  // one-line operations (8 bytes)
    for (int i = 0; i < between; ++i) c.all_reduce(small.ptr(), small.ptr(), 2, d, ReduceOp::kMax, nullptr, Algo::kLL);
    c.all_reduce(in.ptr(), out.ptr(), count, d, ReduceOp::kSum, nullptr, Algo::kLL);  // the first one's parity and flag
    ctx()->synchronize(nullptr, "second large all_reduce");
  });
  long bad = why.empty() ? check_reduced(d, ReduceOp::kSum, second, 0, download(out.ptr(), count * 4), count, n, &why, 1) : -1;
  ASSERT_ALL(bad == 0, "ll all_reduce after the flag wrapped: " << bad << " wrong; " << why);
  c.free(in);
  c.free(out);
  c.free(small);
}

TEST(Collectives, AllReduceLargeAndInPlace) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t count = (size_t(1) << 21) + 3;  // bf16: 4 MiB + 6 bytes: past LL, unaligned tail
  const DataType d = DataType::kBFloat16;
  SymmetricBuffer buf = c.alloc(count * 2), out = c.alloc(count * 2);
  std::vector<std::vector<uint8_t>> ins;
  for (int r = 0; r < n; ++r) ins.push_back(random_elems(d, count, 9000 + r, ReduceOp::kSum));
  std::vector<Algo> large_algos = {Algo::kOneShot, Algo::kTwoShot, Algo::kAuto};
  if (n == 2) large_algos.push_back(Algo::kTwoShotPush);
  if (have_nccl()) large_algos.push_back(Algo::kNccl);
  for (Algo algo : large_algos) {
    upload(buf.ptr(), ins[me]);
    poison(out.ptr(), count * 2);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    std::string why = attempt([&] {
      c.all_reduce(buf.ptr(), out.ptr(), count, d, ReduceOp::kSum, nullptr, algo);
      ctx()->synchronize(nullptr);
    });
    long bad = why.empty() ? check_reduced(d, ReduceOp::kSum, ins, 0, download(out.ptr(), count * 2), count, n, &why, steps_of(algo, n)) : -1;
    ASSERT_ALL(bad == 0, algo_name(algo) << ": " << bad << " wrong; " << why);
  }
  if (n != 2) {
    std::string why = attempt([&] { c.all_reduce(buf.ptr(), out.ptr(), count, d, ReduceOp::kSum, nullptr, Algo::kTwoShotPush); });
    ASSERT_ALL(why.find("two_shot_push is for 2 ranks") != std::string::npos, "two_shot_push at " << n << " ranks: " << why);
  }
  // In place: two_shot, LL, push and NCCL may; one_shot may not.
  std::vector<std::pair<Algo, size_t>> in_place = {{Algo::kTwoShot, count}, {Algo::kLL, size_t(30001)}, {Algo::kPush, size_t(500001)},
                                                   {Algo::kAuto, count}};
  if (have_nccl()) in_place.push_back({Algo::kNccl, count});
  for (const auto& run_ : in_place) {
    const auto algo = run_.first;
    const auto cnt = run_.second;
    upload(buf.ptr(), std::vector<uint8_t>(ins[me].begin(), ins[me].begin() + cnt * 2));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    std::string why = attempt([&] {
      c.all_reduce(buf.ptr(), buf.ptr(), cnt, d, ReduceOp::kSum, nullptr, algo);
      ctx()->synchronize(nullptr);
    });
    long bad = why.empty() ? check_reduced(d, ReduceOp::kSum, ins, 0, download(buf.ptr(), cnt * 2), cnt, n, &why, steps_of(algo, n)) : -1;
    ASSERT_ALL(bad == 0, "in place " << algo_name(algo) << ": " << bad << " wrong; " << why);
  }
  std::string why = attempt([&] { c.all_reduce(buf.ptr(), buf.ptr(), count, d, ReduceOp::kSum, nullptr, Algo::kOneShot); });
  ASSERT_ALL(why.find("one_shot cannot run in place") != std::string::npos, "one_shot in place: " << why);
  c.free(buf);
  c.free(out);
}

TEST(Collectives, ReduceScatterEveryTypeOp) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  SymmetricBuffer in = c.alloc(size_t(n) * 70000 * 8 + 64);
  DeviceBuffer plain_in(size_t(n) * 70000 * 8 + 64), out(70000 * 8 + 64);
  uint64_t seed = 500;
  for (DataType d : kReduceTypes)
    for (ReduceOp op : kOps)
      for (size_t rc : {size_t(1), size_t(13), size_t(4097), size_t(65539)}) {
        ++seed;
        std::vector<std::vector<uint8_t>> ins;
        for (int r = 0; r < n; ++r) ins.push_back(random_elems(d, rc * n, seed * 64 + r, op));
        std::vector<std::pair<Algo, bool>> runs = {{Algo::kLL, false}, {Algo::kPush, false}, {Algo::kDirect, true}, {Algo::kAuto, true}};
        if (have_nccl() && nccl_beside(d, op)) runs.push_back({Algo::kNccl, false});
        for (const auto& run_ : runs) {
          const auto algo = run_.first;
          const auto sym = run_.second;
          void* ip = sym ? in.ptr() : plain_in.p;
          upload(ip, ins[me]);
          poison(out.p, rc * dtype_size(d));
          SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
          std::string why = attempt([&] {
            c.reduce_scatter(ip, out.p, rc, d, op, nullptr, algo);
            ctx()->synchronize(nullptr, "reduce_scatter");
          });
          long bad = why.empty() ? check_reduced(d, op, ins, me * rc, download(out.p, rc * dtype_size(d)), rc, n, &why, steps_of(algo, n)) : -1;
          ASSERT_ALL(bad == 0, "reduce_scatter " << dtype_name(d) << " " << redop_name(op) << " count " << rc << " algo "
                                                 << algo_name(algo) << ": " << bad << " wrong; " << why);
        }
      }
  c.free(in);
}

TEST(Collectives, AllGatherBroadcastAllToAll) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t cap = size_t(n) * ((size_t(3) << 20) + 64);
  SymmetricBuffer in = c.alloc(cap), sym_out = c.alloc(cap);
  DeviceBuffer plain_in(cap), plain_out(cap);
  uint64_t seed = 900;
  for (DataType d : {DataType::kBFloat16, DataType::kUInt8, DataType::kFloat32})
    for (size_t count : movement_counts(d)) {
      const size_t es = dtype_size(d), chunk = count * es;
      std::vector<std::vector<uint8_t>> ins;
      for (int r = 0; r < n; ++r) ins.push_back(random_bytes(chunk * n, ++seed * 64 + r));
      std::vector<std::pair<Algo, bool>> runs = {{Algo::kDirect, true}, {Algo::kPush, true}, {Algo::kAuto, true}, {Algo::kAuto, false}};
      if (chunk <= (size_t(1) << 20)) runs.push_back({Algo::kLL, false});
      if (have_nccl()) runs.push_back({Algo::kNccl, false});
      for (const auto& run_ : runs) {
        const auto algo = run_.first;
        const auto sym = run_.second;
        void* ip = sym ? in.ptr() : plain_in.p;
        // push writes into the peers' outputs: those must be symmetric too.
        void* op_ = (algo == Algo::kPush || algo == Algo::kAuto) && sym ? sym_out.ptr() : plain_out.p;
        const std::string what = std::string(dtype_name(d)) + " count " + std::to_string(count) + " algo " + algo_name(algo) +
                                 (sym ? " symmetric" : " plain");
        // all_gather: my first chunk.
        upload(ip, ins[me]);
        poison(op_, chunk * n);
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        std::string why = attempt([&] {
          c.all_gather(ip, op_, count, d, nullptr, algo);
          ctx()->synchronize(nullptr, "all_gather");
        });
        if (why.empty()) {
          why = rank_order_mismatch(ins, chunk, download(op_, chunk * n));
        }
        // Ordinary buffers past the LL capacity have no path but NCCL: refused (alike on every
        // rank) where ranks share a GPU.
        const bool no_path = !have_nccl() && !sym && why.find("no NCCL communicator") != std::string::npos;
        if (no_path) continue;
        ASSERT_ALL(why.empty(), "all_gather " << what << ": " << why);
        // broadcast from the last rank (non-roots pass no input unless direct needs its address).
        const int root = n - 1;
        poison(op_, chunk);
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        why = attempt([&] {
          c.broadcast(me == root || algo == Algo::kDirect ? ip : nullptr, op_, count, d, root, nullptr, algo);
          ctx()->synchronize(nullptr, "broadcast");
        });
        if (why.empty() && !std::equal(ins[root].begin(), ins[root].begin() + chunk, download(op_, chunk).begin())) why = "wrong data";
        ASSERT_ALL(why.empty(), "broadcast " << what << ": " << why);
        // all_to_all: chunk p of my input goes to rank p.
        if (algo == Algo::kLL && chunk > (size_t(1) << 20)) continue;
        poison(op_, chunk * n);
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        why = attempt([&] {
          c.all_to_all(ip, op_, count, d, nullptr, algo);
          ctx()->synchronize(nullptr, "all_to_all");
        });
        if (why.empty()) {
          why = rank_order_mismatch(ins, chunk, download(op_, chunk * n), me);
        }
        ASSERT_ALL(why.empty(), "all_to_all " << what << ": " << why);
      }
    }
  c.free(in);
  c.free(sym_out);
}

// The in-place forms each operation documents, with every algorithm; other overlaps rejected.
TEST(Collectives, InPlaceConventions) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const DataType d = DataType::kFloat32;
  const size_t count = 20001, chunk = count * 4;
  SymmetricBuffer sym = c.alloc(chunk * n + 64);
  DeviceBuffer plain(chunk * n + 64);
  std::vector<std::vector<uint8_t>> ins;
  for (int r = 0; r < n; ++r) ins.push_back(random_elems(d, count * n, 7000 + r, ReduceOp::kSum));
  std::vector<std::pair<Algo, bool>> runs = {{Algo::kLL, false}, {Algo::kPush, true}, {Algo::kDirect, true}, {Algo::kAuto, true},
                                             {Algo::kAuto, false}};
  if (have_nccl()) runs.push_back({Algo::kNccl, false});
  for (const auto& run_ : runs) {
    const auto algo = run_.first;
    const auto is_sym = run_.second;
    char* base = static_cast<char*>(is_sym ? sym.ptr() : plain.p);
    // all_gather: in == out + rank * send_count.
    std::vector<uint8_t> init(chunk * n, 0xCD);
    std::copy(ins[me].begin(), ins[me].begin() + chunk, init.begin() + me * chunk);
    upload(base, init);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    std::string why = attempt([&] {
      c.all_gather(base + me * chunk, base, count, d, nullptr, algo);
      ctx()->synchronize(nullptr, "all_gather in place");
    });
    if (why.empty()) {
      why = rank_order_mismatch(ins, chunk, download(base, chunk * n));
    }
    ASSERT_ALL(why.empty(), "all_gather in place, algo " << algo_name(algo) << (is_sym ? " symmetric" : " plain") << ": " << why);
    // reduce_scatter: out == in + rank * recv_count.
    if (algo == Algo::kDirect && !is_sym) continue;
    upload(base, ins[me]);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    why = attempt([&] {
      c.reduce_scatter(base, base + me * chunk, count, d, ReduceOp::kSum, nullptr, algo);
      ctx()->synchronize(nullptr, "reduce_scatter in place");
    });
    long bad = why.empty() ? check_reduced(d, ReduceOp::kSum, ins, me * count, download(base + me * chunk, chunk), count, n, &why, steps_of(algo, n)) : -1;
    ASSERT_ALL(bad == 0, "reduce_scatter in place, algo " << algo_name(algo) << ": " << bad << " wrong; " << why);
  }
  // Every other overlap is refused on every rank, naming the convention.
  char* s = static_cast<char*>(sym.ptr());
  std::string why = attempt([&] { c.all_reduce(s, s + 64, 100, d, ReduceOp::kSum, nullptr); });
  ASSERT_ALL(why.find("overlap partially") != std::string::npos, "partial overlap all_reduce: " << why);
  why = attempt([&] { c.all_gather(s + 8, s, 100, d, nullptr); });
  ASSERT_ALL(why.find("in place means in == out + rank * send_count") != std::string::npos || (me == 0 && n == 1), "all_gather overlap: " << why);
  why = attempt([&] { c.all_to_all(s, s, 10, d, nullptr); });
  ASSERT_ALL(why.find("cannot run in place") != std::string::npos, "all_to_all in place: " << why);
  c.free(sym);
}

// Splits of a few KiB (LL) and of hundreds of KiB (direct, chosen on the GPU by the ll algorithm),
// through both algorithms; then bad counts.
// (algorithm, count scale, output symmetric: ll then writes into the peers' outputs when splits are large)
class AllToAllV : public ::testing::TestWithParam<std::tuple<Algo, int, bool>> {};

TEST_P(AllToAllV, CountsOnTheGpu) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const DataType d = DataType::kBFloat16;
  const Algo algo = std::get<0>(GetParam());
  const int64_t scale = std::get<1>(GetParam());
  // Rank r sends ((r + 1) * 1000 + 7 * p + 3) * scale elements to rank p.
  auto cnt = [scale](int r, int p) { return int64_t((r + 1) * 1000 + 7 * p + 3) * scale; };
  int64_t recv_total = 0;
  for (int p = 0; p < n; ++p) recv_total += cnt(p, me);
  int64_t most = 0;  // every rank allocates the same size: the largest send total
  for (int r = 0; r < n; ++r) {
    int64_t t = 0;
    for (int p = 0; p < n; ++p) t += cnt(r, p);
    most = std::max(most, t);
  }
  int64_t most_recv = 0;
  for (int r = 0; r < n; ++r) {
    int64_t t = 0;
    for (int p = 0; p < n; ++p) t += cnt(p, r);
    most_recv = std::max(most_recv, t);
  }
  const bool sym_out = std::get<2>(GetParam());
  SymmetricBuffer in = c.alloc(most * 2), counts = c.alloc(sizeof(int64_t) * n);
  SymmetricBuffer sym = sym_out ? c.alloc(most_recv * 2 + 16) : SymmetricBuffer();
  DeviceBuffer plain_out(sym_out ? 16 : recv_total * 2 + 16), recv_counts(sizeof(int64_t) * n);
  struct { void* p; } out{sym_out ? sym.ptr() : plain_out.p};
  std::vector<std::vector<uint8_t>> ins;
  for (int r = 0; r < n; ++r) {
    int64_t t = 0;
    for (int p = 0; p < n; ++p) t += cnt(r, p);
    ins.push_back(random_bytes(t * 2, 4242 + r));
  }
  std::vector<int64_t> mine(n);
  for (int p = 0; p < n; ++p) mine[p] = cnt(me, p);
  upload(in.ptr(), ins[me]);
  SYMMEM_CUDA_CHECK(cudaMemcpy(counts.ptr(), mine.data(), sizeof(int64_t) * n, cudaMemcpyHostToDevice));
  poison(out.p, recv_total * 2 + 16);
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  std::string why = attempt([&] {
    for (int rep = 0; rep < 3; ++rep) {
      c.all_to_all_v(in.ptr(), out.p, recv_total, counts.as<int64_t>(), recv_counts.as<int64_t>(), d, nullptr, algo);
      ctx()->synchronize(nullptr, "all_to_all_v");
    }
  });
  if (why.empty()) {
    auto got = download(out.p, recv_total * 2 + 16);
    size_t off = 0;
    for (int r = 0; r < n && why.empty(); ++r) {
      int64_t before = 0;
      for (int q = 0; q < me; ++q) before += cnt(r, q);
      if (!std::equal(ins[r].begin() + before * 2, ins[r].begin() + (before + cnt(r, me)) * 2, got.begin() + off))
        why = "wrong data from rank " + std::to_string(r);
      off += cnt(r, me) * 2;
    }
    if (why.empty() && got[off] != 0xFF) why = "wrote past the received total";
    std::vector<int64_t> rc(n);
    SYMMEM_CUDA_CHECK(cudaMemcpy(rc.data(), recv_counts.p, sizeof(int64_t) * n, cudaMemcpyDeviceToHost));
    for (int r = 0; r < n && why.empty(); ++r)
      if (rc[r] != cnt(r, me)) why = "recv_counts[" + std::to_string(r) + "] = " + std::to_string(rc[r]);
  }
  ASSERT_ALL(why.empty(), "all_to_all_v " << algo_name(algo) << " scale " << scale << " symmetric out " << sym_out << ": " << why);

  // Bad counts: every rank raises InvalidArgument naming the culprit; nothing is written.
  struct Case { int64_t value; size_t out_count; const char* expect; };
  const int culprit = n - 1;
  // (The culprit's count to itself: only its own receive total and its own send total change.)
  for (Case k : {Case{-5, size_t(recv_total), "is -5; counts must be >= 0"}, Case{most + 1, size_t(recv_total), "add up to"},
                 Case{cnt(culprit, culprit), size_t(1), "would receive"}}) {
    std::vector<int64_t> bad = mine;
    if (me == culprit) bad[culprit] = k.value;
    SYMMEM_CUDA_CHECK(cudaMemcpy(counts.ptr(), bad.data(), sizeof(int64_t) * n, cudaMemcpyHostToDevice));
    poison(out.p, recv_total * 2 + 16);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    heap().team().barrier("bad counts uploaded");
    why = attempt([&] {
      c.all_to_all_v(in.ptr(), out.p, k.out_count, counts.as<int64_t>(), nullptr, d, nullptr, algo);
      ctx()->synchronize(nullptr, "all_to_all_v");
    });
    const bool untouched = download(out.p, 16) == std::vector<uint8_t>(16, 0xFF);
    ASSERT_ALL(why.find(k.expect) != std::string::npos && why.find("team rank") != std::string::npos && untouched,
               "bad count " << k.value << ": got '" << why << "', output untouched " << untouched);
  }
  // The communicator goes on working.
  SYMMEM_CUDA_CHECK(cudaMemcpy(counts.ptr(), mine.data(), sizeof(int64_t) * n, cudaMemcpyHostToDevice));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  why = attempt([&] {
    c.all_to_all_v(in.ptr(), out.p, recv_total, counts.as<int64_t>(), nullptr, d, nullptr, algo);
    ctx()->synchronize(nullptr, "all_to_all_v after bad counts");
  });
  ASSERT_ALL(why.empty(), why);
  // A rank that receives nothing may pass no output (null, out_count 0): no rank sends the last one
  // anything; what the others receive is unchanged, and the last one's recv_counts are all 0.
  std::vector<int64_t> none = mine;
  none[n - 1] = 0;
  SYMMEM_CUDA_CHECK(cudaMemcpy(counts.ptr(), none.data(), sizeof(int64_t) * n, cudaMemcpyHostToDevice));
  SYMMEM_CUDA_CHECK(cudaMemset(recv_counts.p, 0xFF, sizeof(int64_t) * n));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  heap().team().barrier("counts to the last rank zeroed");
  const bool last = me == n - 1;
  why = attempt([&] {
    c.all_to_all_v(in.ptr(), last ? nullptr : out.p, last ? 0 : recv_total, counts.as<int64_t>(), recv_counts.as<int64_t>(), d,
                   nullptr, algo);
    ctx()->synchronize(nullptr, "all_to_all_v into no output");
  });
  if (why.empty()) {
    std::vector<int64_t> rc(n);
    SYMMEM_CUDA_CHECK(cudaMemcpy(rc.data(), recv_counts.p, sizeof(int64_t) * n, cudaMemcpyDeviceToHost));
    for (int r = 0; r < n && why.empty(); ++r)
      if (rc[r] != (last ? 0 : cnt(r, me))) why = "recv_counts[" + std::to_string(r) + "] = " + std::to_string(rc[r]);
  }
  ASSERT_ALL(why.empty(), "all_to_all_v " << algo_name(algo) << " into no output on the last rank: " << why);
  c.free(in);
  c.free(counts);
  if (sym.valid()) c.free(sym);
}

INSTANTIATE_TEST_SUITE_P(Collectives, AllToAllV,
                         ::testing::Combine(::testing::Values(Algo::kAuto, Algo::kLL, Algo::kDirect), ::testing::Values(1, 100),
                                            ::testing::Bool()));

TEST(Collectives, GraphCaptureReplaysWithNewData) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t small = 3001, large = (size_t(1) << 20) + 5;
  SymmetricBuffer in = c.alloc(large * 4), out = c.alloc(large * 4);
  DeviceBuffer plain_in(small * 4), plain_out(small * 4), ag_out(small * 4 * n);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t exec = capture_graph(s, [&] {
    c.all_reduce(plain_in.p, plain_out.p, small, DataType::kFloat32, ReduceOp::kSum, s, Algo::kLL);
    c.all_reduce(in.ptr(), out.ptr(), large, DataType::kFloat32, ReduceOp::kSum, s, Algo::kTwoShot);
    c.all_gather(plain_in.p, ag_out.p, small, DataType::kFloat32, s, Algo::kLL);
    c.all_reduce(plain_in.p, plain_in.p, small, DataType::kFloat32, ReduceOp::kMax, s, Algo::kPush);  // in place
  });
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<std::vector<uint8_t>> a, b;
    for (int r = 0; r < n; ++r) {
      a.push_back(random_elems(DataType::kFloat32, small, 100 * rep + r, ReduceOp::kSum));
      b.push_back(random_elems(DataType::kFloat32, large, 100 * rep + 50 + r, ReduceOp::kSum));
    }
    upload(plain_in.p, a[me]);
    upload(in.ptr(), b[me]);
    poison(plain_out.p, small * 4);
    poison(out.ptr(), large * 4);
    poison(ag_out.p, small * 4 * n);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    std::string why = attempt([&] {
      SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
      ctx()->synchronize(s, "graph replay");
    });
    long bad = 0;
    if (why.empty()) {
      bad += check_reduced(DataType::kFloat32, ReduceOp::kSum, a, 0, download(plain_out.p, small * 4), small, n, &why);
      // plain_in now holds max over ranks of my input (push, in place), the same on every rank.
      bad += check_reduced(DataType::kFloat32, ReduceOp::kMax, a, 0, download(plain_in.p, small * 4), small, n, &why);
      bad += check_reduced(DataType::kFloat32, ReduceOp::kSum, b, 0, download(out.ptr(), large * 4), large, n, &why);
      auto got = download(ag_out.p, small * 4 * n);
      for (int r = 0; r < n; ++r) bad += !std::equal(a[r].begin(), a[r].end(), got.begin() + r * small * 4);
    }
    ASSERT_ALL(why.empty() && bad == 0, "replay " << rep << ": " << bad << " wrong; " << why);
  }
  SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
  c.free(in);
  c.free(out);
}

// An NCCL call captured in global mode (torch.cuda.graph's default) while the NCCL watchdog has an
// eager call's event to check: the watchdog's query must not break the capture (it did: seen from
// PyTorch at 4 GPUs as "ncclAllReduce failed: unhandled cuda error").
TEST(Collectives, NcclCapturedInGlobalModeBesideTheWatchdog) {
  Communicator& c = comm();
  if (!have_nccl()) GTEST_SKIP() << "no NCCL communicator here (ranks share a GPU)";
  const int n = c.size(), me = c.rank();
  const size_t count = (size_t(1) << 16) + 3;
  DeviceBuffer in(count * 4), out(count * 4);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<std::vector<uint8_t>> a;
  for (int r = 0; r < n; ++r) a.push_back(random_elems(DataType::kFloat32, count, 4242 + r, ReduceOp::kSum));
  upload(in.p, a[me]);
  std::string why = attempt([&] {
    c.all_reduce(in.p, out.p, count, DataType::kFloat32, ReduceOp::kSum, s, Algo::kNccl);  // watched: an event is pending
    cudaGraphExec_t exec = capture_graph(s, [&] {
      c.all_reduce(in.p, out.p, count, DataType::kFloat32, ReduceOp::kSum, s, Algo::kNccl);
      usleep(150 * 1000);  // the watchdog wakes (every 50 ms) while the capture is open
    }, cudaStreamCaptureModeGlobal);
    poison(out.p, count * 4);
    SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    ctx()->synchronize(s, "graph replay");
    SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  });
  long bad = 0;
  if (why.empty()) bad = check_reduced(DataType::kFloat32, ReduceOp::kSum, a, 0, download(out.p, count * 4), count, n, &why);
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
  ASSERT_ALL(why.empty() && bad == 0, bad << " wrong; " << why);
}

TEST(Collectives, BadArgumentsAreRejectedBeforeLaunch) {
  Communicator& c = comm();
  DeviceBuffer a(4096), b(4096);
  std::string m;
  auto expect = [&](const char* what, const std::string& needle, auto&& call) {
    const std::string got = attempt(call);
    if (got.find(needle) == std::string::npos && m.empty()) m = std::string(what) + ": expected '" + needle + "', got '" + got + "'";
  };
  char* pa = static_cast<char*>(a.p);
  expect("one_shot plain", "one_shot reads peers' inputs directly", [&] { c.all_reduce(pa, b.p, 16, DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kOneShot); });
  expect("dtype range", "is not a symmem::DataType", [&] { c.all_reduce(pa, b.p, 16, static_cast<DataType>(12), ReduceOp::kSum, nullptr); });
  expect("ll float64 capacity", "8-byte lines", [&] { c.all_reduce(pa, pa, size_t(100000), DataType::kFloat64, ReduceOp::kSum, nullptr, Algo::kLL); });
  expect("null in", "in is null", [&] { c.all_reduce(nullptr, b.p, 16, DataType::kFloat32, ReduceOp::kSum, nullptr); });
  expect("null out", "out is null", [&] { c.broadcast(pa, nullptr, 16, DataType::kFloat32, 0, nullptr); });
  expect("root range", "root=", [&] { c.broadcast(pa, b.p, 16, DataType::kFloat32, c.size(), nullptr); });
  expect("null counts", "send_counts is null", [&] { c.all_to_all_v(pa, b.p, 16, nullptr, nullptr, DataType::kFloat32, nullptr); });
  expect("ll capacity", "ll carries at most", [&] { c.all_reduce(pa, pa, (size_t(4) << 20), DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kLL); });
  expect("misaligned", "not aligned to its dtype", [&] { c.all_reduce(pa + 2, b.p, 16, DataType::kFloat32, ReduceOp::kSum, nullptr); });
  expect("algo range", "is not a symmem::Algo", [&] { c.all_reduce(pa, b.p, 16, DataType::kFloat32, ReduceOp::kSum, nullptr, static_cast<Algo>(99)); });
  expect("op range", "is not a symmem::ReduceOp", [&] { c.all_reduce(pa, b.p, 16, DataType::kFloat32, static_cast<ReduceOp>(7), nullptr); });
  expect("dtype range", "is not a symmem::DataType", [&] { c.all_gather(pa, b.p, 16, static_cast<DataType>(42), nullptr); });
  const std::string zero = attempt([&] { c.all_reduce(pa, b.p, 0, DataType::kFloat32, ReduceOp::kSum, nullptr); });
  if (!zero.empty() && m.empty()) m = "count 0: " + zero;
  ASSERT_ALL(m.empty(), m);
}

// Two ranks of one GPU-less pair... sub-teams: the world split two ways, each part running its own
// collectives at once on its own stream, then the other split.
TEST(Collectives, SubTeamCommunicatorsRunAtOnce) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  // A 2 x (n/2) mesh where n is even: "tp" pairs of neighbours, "dp" the ranks with the same
  // position in their pair. Odd n: halves by parity.
  std::unique_ptr<Communicator> tp, dp;
  std::string why = attempt([&] {
    tp = c.split(n % 2 == 0 ? me / 2 : me % 2, me);
    dp = c.split(n % 2 == 0 ? me % 2 : me / ((n + 1) / 2), me);
  });
  ASSERT_ALL(why.empty() && tp && dp, "split: " << why);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const DataType d = DataType::kFloat32;
  for (Communicator* sub : {tp.get(), dp.get()}) {
    const int sn = sub->size(), sme = sub->rank();
    for (Algo algo : {Algo::kAuto, Algo::kLL, Algo::kOneShot, Algo::kPush}) {
      for (size_t count : {size_t(77), size_t(300001)}) {
        if (algo == Algo::kLL && count * 4 > (size_t(1) << 20)) continue;
        SymmetricBuffer in = sub->alloc(count * 4), out = sub->alloc(count * 4);
        // Inputs named by global rank, so the reference needs only the team's global ranks.
        std::vector<std::vector<uint8_t>> ins;
        for (int r = 0; r < sn; ++r) ins.push_back(random_elems(d, count, 31 * count + sub->team().global_rank(r), ReduceOp::kSum));
        upload(in.ptr(), ins[sme]);
        poison(out.ptr(), count * 4);
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        why = attempt([&] {
          for (int rep = 0; rep < 5; ++rep) sub->all_reduce(in.ptr(), out.ptr(), count, d, ReduceOp::kSum, s, algo);
          ctx()->synchronize(s, "sub-team all_reduce");
        });
        long bad = why.empty() ? check_reduced(d, ReduceOp::kSum, ins, 0, download(out.ptr(), count * 4), count, sn, &why) : -1;
        ASSERT_ALL(bad == 0, "team " << sub->team().name() << " (" << sn << " ranks) algo " << algo_name(algo) << " count "
                                     << count << ": " << bad << " wrong; " << why);
        sub->free(in);
        sub->free(out);
      }
    }
  }
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
}

// Ranks that load different tuning tables would pick different algorithms for one call: refused
// when the communicator is made, on every rank.
TEST(Collectives, DifferentTuningTablesAreRefusedOnEveryRank) {
  if (ctx()->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::string path = "/tmp/symmem-test-table-" + std::to_string(getpid()) + ".txt";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(ctx()->rank() == 0 ? "all_reduce * * 1099511627776 ll\n" : "all_reduce * * 1099511627776 push\n", f);
    std::fclose(f);
  }
  CommOptions opt;
  opt.tuning_file = path;
  const std::string why = attempt([&] { Communicator c(ctx(), opt); });
  std::remove(path.c_str());
  ASSERT_ALL(why.find("arguments differ across ranks (table)") != std::string::npos, "got: '" << why << "'");
}

// Options one rank refuses (a table file it cannot read, a bad LL limit) or that differ across ranks:
// raised on every rank, naming the rank, before any heap is made (a rank used to throw alone,
// leaving the others in the heap's exchanges until the bound).
TEST(Collectives, OptionsRefusedOnOneRankAreRaisedOnEveryRank) {
  if (ctx()->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int last = ctx()->size() - 1;
  CommOptions missing;
  if (ctx()->rank() == last) missing.tuning_file = "/nonexistent/symmem-table.txt";
  std::string why = attempt([&] { Communicator c(ctx(), missing); });
  ASSERT_ALL(why.find("rank " + std::to_string(last) + " refused: ") != std::string::npos &&
                 why.find("/nonexistent/symmem-table.txt") != std::string::npos,
             "got: '" << why << "'");
  CommOptions odd;
  if (ctx()->rank() == 0) odd.ll_max_bytes = 100;
  why = attempt([&] { Communicator c(ctx(), odd); });
  ASSERT_ALL(why.find("rank 0 refused: CommOptions::ll_max_bytes=100") != std::string::npos, "got: '" << why << "'");
  CommOptions unlike;
  if (ctx()->rank() == last) unlike.ll_max_bytes = 2 * unlike.ll_max_bytes;
  why = attempt([&] { Communicator c(ctx(), unlike); });
  ASSERT_ALL(why.find("arguments differ across ranks (ll_max_bytes)") != std::string::npos, "got: '" << why << "'");
  Communicator fine(ctx());  // and a communicator still forms after them
}
