// Collectives against host references on random data: every dtype and reduction, sizes that hit
// the tails, every algorithm that can run with the given buffers; outputs poisoned first.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>

#include "gpu_env.hpp"

using namespace symmem;
using namespace symmem::test;

namespace {

Communicator& comm() {
  static std::unique_ptr<Communicator> c = std::make_unique<Communicator>(ctx());
  return *c;
}
bool have_nccl() { return comm().nccl() != nullptr; }

// Host conversions, matching the device's.
float to_float(DataType d, const uint8_t* p) {
  switch (d) {
    case DataType::kFloat32: { float f; std::memcpy(&f, p, 4); return f; }
    case DataType::kFloat16: { __half_raw r; std::memcpy(&r.x, p, 2); return __half2float(__half(r)); }
    case DataType::kBFloat16: { uint32_t u = uint32_t(p[0] | (p[1] << 8)) << 16; float f; std::memcpy(&f, &u, 4); return f; }
    case DataType::kFp8E4M3: { __nv_fp8_e4m3 v; v.__x = p[0]; return float(v); }
    case DataType::kFp8E5M2: { __nv_fp8_e5m2 v; v.__x = p[0]; return float(v); }
    case DataType::kInt32: { int32_t i; std::memcpy(&i, p, 4); return float(i); }
    default: return p[0];
  }
}
void from_float(DataType d, float f, uint8_t* p) {
  switch (d) {
    case DataType::kFloat32: std::memcpy(p, &f, 4); break;
    case DataType::kFloat16: { __half h = __float2half_rn(f); std::memcpy(p, &h, 2); break; }
    case DataType::kBFloat16: { __nv_bfloat16 b = __float2bfloat16_rn(f); std::memcpy(p, &b, 2); break; }
    case DataType::kFp8E4M3: { __nv_fp8_e4m3 v(f); p[0] = v.__x; break; }
    case DataType::kFp8E5M2: { __nv_fp8_e5m2 v(f); p[0] = v.__x; break; }
    case DataType::kInt32: { int32_t i = static_cast<int32_t>(f); std::memcpy(p, &i, 4); break; }
    default: p[0] = static_cast<uint8_t>(f);
  }
}
/// Random elements of dtype d (ints small enough that products stay exact).
std::vector<uint8_t> random_elems(DataType d, size_t count, uint64_t seed, ReduceOp op) {
  std::mt19937_64 g(seed * 7919 + 17);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<uint8_t> v(count * dtype_size(d));
  for (size_t i = 0; i < count; ++i) {
    float f = d == DataType::kInt32 ? float(int(g() % (op == ReduceOp::kProd ? 5 : 2001)) - (op == ReduceOp::kProd ? 2 : 1000)) : u(g);
    if (d == DataType::kFp8E4M3 || d == DataType::kFp8E5M2) f *= 4;
    from_float(d, f, v.data() + i * dtype_size(d));
  }
  return v;
}
float combine(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
    case ReduceOp::kProd: return a * b;
    default: return a + b;
  }
}
/// Reference of element i over ranks' inputs (fp32, rank order, as the device does).
float reference(DataType d, ReduceOp op, const std::vector<std::vector<uint8_t>>& ins, size_t elem, int n) {
  const size_t es = dtype_size(d);
  float acc = to_float(d, ins[0].data() + elem * es);
  if (d == DataType::kInt32) {
    int32_t ia = static_cast<int32_t>(acc);
    for (int r = 1; r < n; ++r) {
      int32_t b = static_cast<int32_t>(to_float(d, ins[r].data() + elem * es));
      ia = op == ReduceOp::kMax ? std::max(ia, b) : op == ReduceOp::kMin ? std::min(ia, b)
         : op == ReduceOp::kProd ? static_cast<int32_t>(uint32_t(ia) * uint32_t(b)) : static_cast<int32_t>(uint32_t(ia) + uint32_t(b));
    }
    if (op == ReduceOp::kAvg) ia /= n;
    return static_cast<float>(ia);
  }
  for (int r = 1; r < n; ++r) acc = combine(op, acc, to_float(d, ins[r].data() + elem * es));
  if (op == ReduceOp::kAvg) acc /= n;
  uint8_t tmp[4];
  from_float(d, acc, tmp);  // rounded to the output type
  return to_float(d, tmp);
}
double tolerance(DataType d, float ref) {
  switch (d) {
    case DataType::kFloat32: return 1e-5 * std::max(1.f, std::fabs(ref));
    case DataType::kFloat16: return 2e-3 * std::max(1.f, std::fabs(ref));
    case DataType::kBFloat16: return 1.6e-2 * std::max(1.f, std::fabs(ref));
    case DataType::kFp8E4M3: return 0.13 * std::max(1.f, std::fabs(ref));
    case DataType::kFp8E5M2: return 0.26 * std::max(1.f, std::fabs(ref));
    default: return 0;
  }
}
/// Counts elements of `got` that miss the reference; reports the first.
long check_reduced(DataType d, ReduceOp op, const std::vector<std::vector<uint8_t>>& ins, size_t first_elem,
                   const std::vector<uint8_t>& got, size_t count, int n, std::string* first_bad) {
  long bad = 0;
  const size_t es = dtype_size(d);
  for (size_t i = 0; i < count; ++i) {
    float ref = reference(d, op, ins, first_elem + i, n);
    float g = to_float(d, got.data() + i * es);
    if (!(std::fabs(g - ref) <= tolerance(d, ref))) {  // NaN (poison) fails too
      if (bad++ == 0) *first_bad = "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(ref);
    }
  }
  return bad;
}

void poison(void* p, size_t bytes) { SYMMEM_CUDA_CHECK(cudaMemset(p, 0xFF, bytes)); }  // NaN for every float type

const DataType kReduceTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                                 DataType::kFp8E4M3, DataType::kFp8E5M2, DataType::kInt32};
const ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd, ReduceOp::kAvg};
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
                                                   {Algo::kTwoShot, true}, {Algo::kAuto, true}};
        if (n == 2) runs.push_back({Algo::kTwoShotPush, true});
        // NCCL (the fallback's wiring) where NCCL supports the pair.
        if (have_nccl() && op == ReduceOp::kSum && d != DataType::kFp8E5M2) runs.push_back({Algo::kNccl, false});
        for (auto [algo, sym] : runs) {
          void* ip = sym ? in.ptr() : plain_in.p;
          void* op_ = sym ? out.ptr() : plain_out.p;
          upload(ip, ins[me]);
          poison(op_, bytes);
          SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
          c.all_reduce(ip, op_, count, d, op, nullptr, algo);
          ctx()->synchronize(nullptr, "all_reduce");
          std::string why;
          long bad = check_reduced(d, op, ins, 0, download(op_, bytes), count, n, &why);
          ASSERT_EQ(bad, 0) << "all_reduce " << dtype_name(d) << " " << redop_name(op) << " count " << count << " algo "
                            << algo_name(algo) << ": " << why;
        }
      }
  c.free(in);
  c.free(out);
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
  else EXPECT_THROW(c.all_reduce(buf.ptr(), out.ptr(), count, d, ReduceOp::kSum, nullptr, Algo::kTwoShotPush), InvalidArgument);
  for (Algo algo : large_algos) {
    upload(buf.ptr(), ins[me]);
    poison(out.ptr(), count * 2);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    c.all_reduce(buf.ptr(), out.ptr(), count, d, ReduceOp::kSum, nullptr, algo);
    ctx()->synchronize(nullptr);
    std::string why;
    EXPECT_EQ(check_reduced(d, ReduceOp::kSum, ins, 0, download(out.ptr(), count * 2), count, n, &why), 0) << algo_name(algo) << ": " << why;
  }
  // In place: two_shot and LL (small) may; one_shot may not.
  for (auto [algo, cnt] : {std::pair<Algo, size_t>{Algo::kTwoShot, count}, {Algo::kLL, size_t(30001)}, {Algo::kPush, size_t(500001)},
                           {Algo::kAuto, count}}) {
    upload(buf.ptr(), std::vector<uint8_t>(ins[me].begin(), ins[me].begin() + cnt * 2));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    c.all_reduce(buf.ptr(), buf.ptr(), cnt, d, ReduceOp::kSum, nullptr, algo);
    ctx()->synchronize(nullptr);
    std::string why;
    EXPECT_EQ(check_reduced(d, ReduceOp::kSum, ins, 0, download(buf.ptr(), cnt * 2), cnt, n, &why), 0) << "in place " << algo_name(algo) << ": " << why;
  }
  EXPECT_THROW(c.all_reduce(buf.ptr(), buf.ptr(), count, d, ReduceOp::kSum, nullptr, Algo::kOneShot), InvalidArgument);
  c.free(buf);
  c.free(out);
}

TEST(Collectives, ReduceScatterEveryTypeOp) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  SymmetricBuffer in = c.alloc(size_t(n) * 70000 * 4 + 64);
  DeviceBuffer plain_in(size_t(n) * 70000 * 4 + 64), out(70000 * 4 + 64);
  uint64_t seed = 500;
  for (DataType d : kReduceTypes)
    for (ReduceOp op : kOps)
      for (size_t rc : {size_t(1), size_t(13), size_t(4097), size_t(65539)}) {
        ++seed;
        std::vector<std::vector<uint8_t>> ins;
        for (int r = 0; r < n; ++r) ins.push_back(random_elems(d, rc * n, seed * 64 + r, op));
        std::vector<std::pair<Algo, bool>> runs = {{Algo::kLL, false}, {Algo::kPush, false}, {Algo::kDirect, true}, {Algo::kAuto, true}};
        if (have_nccl() && op == ReduceOp::kSum && d != DataType::kFp8E5M2) runs.push_back({Algo::kNccl, false});
        for (auto [algo, sym] : runs) {
          void* ip = sym ? in.ptr() : plain_in.p;
          upload(ip, ins[me]);
          poison(out.p, rc * dtype_size(d));
          SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
          c.reduce_scatter(ip, out.p, rc, d, op, nullptr, algo);
          ctx()->synchronize(nullptr, "reduce_scatter");
          std::string why;
          ASSERT_EQ(check_reduced(d, op, ins, me * rc, download(out.p, rc * dtype_size(d)), rc, n, &why), 0)
              << "reduce_scatter " << dtype_name(d) << " " << redop_name(op) << " count " << rc << " algo " << algo_name(algo) << ": " << why;
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
    for (size_t count : {size_t(1), size_t(5), size_t(1000), size_t(65537), (size_t(3) << 20) / dtype_size(d) + 1}) {
      const size_t es = dtype_size(d), chunk = count * es;
      std::vector<std::vector<uint8_t>> ins;
      for (int r = 0; r < n; ++r) ins.push_back(random_bytes(chunk * n, ++seed * 64 + r));
      std::vector<std::pair<Algo, bool>> runs = {{Algo::kDirect, true}, {Algo::kPush, true}, {Algo::kAuto, true}};
      if (chunk <= (size_t(1) << 20)) runs.push_back({Algo::kLL, false});
      if (have_nccl()) runs.push_back({Algo::kNccl, false});
      for (auto [algo, sym] : runs) {
        void* ip = sym ? in.ptr() : plain_in.p;
        // push writes into the peers' outputs: those must be symmetric too.
        struct { void* p; } out{algo == Algo::kPush || algo == Algo::kAuto ? sym_out.ptr() : plain_out.p};
        // all_gather: my first chunk.
        upload(ip, ins[me]);
        poison(out.p, chunk * n);
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        c.all_gather(ip, out.p, count, d, nullptr, algo);
        ctx()->synchronize(nullptr, "all_gather");
        auto got = download(out.p, chunk * n);
        for (int r = 0; r < n; ++r)
          ASSERT_TRUE(std::equal(ins[r].begin(), ins[r].begin() + chunk, got.begin() + r * chunk))
              << "all_gather from rank " << r << " " << dtype_name(d) << " count " << count << " algo " << algo_name(algo);
        // broadcast from the last rank.
        const int root = n - 1;
        poison(out.p, chunk);
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        c.broadcast(ip, out.p, count, d, root, nullptr, algo);
        ctx()->synchronize(nullptr, "broadcast");
        got = download(out.p, chunk);
        ASSERT_TRUE(std::equal(ins[root].begin(), ins[root].begin() + chunk, got.begin()))
            << "broadcast " << dtype_name(d) << " count " << count << " algo " << algo_name(algo);
        // all_to_all: chunk p of my input goes to rank p.
        if (chunk * n > (size_t(1) << 20) * n && algo == Algo::kLL) continue;
        poison(out.p, chunk * n);
        SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
        c.all_to_all(ip, out.p, count, d, nullptr, algo);
        ctx()->synchronize(nullptr, "all_to_all");
        got = download(out.p, chunk * n);
        for (int r = 0; r < n; ++r)
          ASSERT_TRUE(std::equal(ins[r].begin() + me * chunk, ins[r].begin() + (me + 1) * chunk, got.begin() + r * chunk))
              << "all_to_all from rank " << r << " " << dtype_name(d) << " count " << count << " algo " << algo_name(algo);
      }
    }
  c.free(in);
  c.free(sym_out);
}

TEST(Collectives, AllToAllVWithCountsOnTheGpu) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const DataType d = DataType::kBFloat16;
  // Rank r sends (r + 1) * 1000 + 7 * p + 3 elements to rank p.
  auto cnt = [](int r, int p) { return int64_t((r + 1) * 1000 + 7 * p + 3); };
  int64_t send_total = 0, recv_total = 0;
  for (int p = 0; p < n; ++p) { send_total += cnt(me, p); recv_total += cnt(p, me); }
  int64_t most = 0;  // every rank allocates the same size: the largest send total
  for (int r = 0; r < n; ++r) {
    int64_t t = 0;
    for (int p = 0; p < n; ++p) t += cnt(r, p);
    most = std::max(most, t);
  }
  SymmetricBuffer in = c.alloc(most * 2), counts = c.alloc(sizeof(int64_t) * n);
  DeviceBuffer out(recv_total * 2 + 16), recv_counts(sizeof(int64_t) * n);
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
  for (int rep = 0; rep < 3; ++rep) {
    c.all_to_all_v(in.ptr(), out.p, counts.as<int64_t>(), recv_counts.as<int64_t>(), d, nullptr);
    ctx()->synchronize(nullptr, "all_to_all_v");
  }
  auto got = download(out.p, recv_total * 2 + 16);
  size_t off = 0;
  for (int r = 0; r < n; ++r) {
    int64_t before = 0;
    for (int q = 0; q < me; ++q) before += cnt(r, q);
    ASSERT_TRUE(std::equal(ins[r].begin() + before * 2, ins[r].begin() + (before + cnt(r, me)) * 2, got.begin() + off)) << "from rank " << r;
    off += cnt(r, me) * 2;
  }
  EXPECT_EQ(got[off], 0xFF) << "wrote past the received total";
  std::vector<int64_t> rc(n);
  SYMMEM_CUDA_CHECK(cudaMemcpy(rc.data(), recv_counts.p, sizeof(int64_t) * n, cudaMemcpyDeviceToHost));
  for (int r = 0; r < n; ++r) EXPECT_EQ(rc[r], cnt(r, me));
  c.free(in);
  c.free(counts);
}

TEST(Collectives, GraphCaptureReplaysWithNewData) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  const size_t small = 3001, large = (size_t(1) << 20) + 5;
  SymmetricBuffer in = c.alloc(large * 4), out = c.alloc(large * 4);
  DeviceBuffer plain_in(small * 4), plain_out(small * 4), ag_out(small * 4 * n);
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  cudaGraphExec_t exec;
  SYMMEM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  c.all_reduce(plain_in.p, plain_out.p, small, DataType::kFloat32, ReduceOp::kSum, s, Algo::kLL);
  c.all_reduce(in.ptr(), out.ptr(), large, DataType::kFloat32, ReduceOp::kSum, s, Algo::kTwoShot);
  c.all_gather(plain_in.p, ag_out.p, small, DataType::kFloat32, s, Algo::kLL);
  c.all_reduce(plain_in.p, plain_in.p, small, DataType::kFloat32, ReduceOp::kMax, s, Algo::kPush);  // in place
  SYMMEM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  SYMMEM_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
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
    SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    ctx()->synchronize(s, "graph replay");
    std::string why;
    EXPECT_EQ(check_reduced(DataType::kFloat32, ReduceOp::kSum, a, 0, download(plain_out.p, small * 4), small, n, &why), 0) << rep << why;
    // plain_in now holds max over ranks of my input (push, in place), the same on every rank.
    std::vector<std::vector<uint8_t>> maxed(n, download(plain_in.p, small * 4));
    EXPECT_EQ(check_reduced(DataType::kFloat32, ReduceOp::kMax, a, 0, maxed[0], small, n, &why), 0) << rep << why;
    EXPECT_EQ(check_reduced(DataType::kFloat32, ReduceOp::kSum, b, 0, download(out.ptr(), large * 4), large, n, &why), 0) << rep << why;
    auto got = download(ag_out.p, small * 4 * n);
    for (int r = 0; r < n; ++r) EXPECT_TRUE(std::equal(a[r].begin(), a[r].end(), got.begin() + r * small * 4)) << rep;
  }
  SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  SYMMEM_CUDA_CHECK(cudaGraphDestroy(g));
  SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
  c.free(in);
  c.free(out);
}

TEST(Collectives, BadArgumentsAreRejectedBeforeLaunch) {
  Communicator& c = comm();
  DeviceBuffer a(4096), b(4096);
  try {
    c.all_reduce(a.p, b.p, 16, DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kOneShot);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("one_shot reads peers' inputs directly"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.all_reduce(a.p, b.p, 16, DataType::kUInt8, ReduceOp::kSum, nullptr), InvalidArgument);
  EXPECT_THROW(c.all_reduce(nullptr, b.p, 16, DataType::kFloat32, ReduceOp::kSum, nullptr), InvalidArgument);
  EXPECT_THROW(c.broadcast(a.p, b.p, 16, DataType::kFloat32, c.size(), nullptr), InvalidArgument);
  EXPECT_THROW(c.all_to_all_v(a.p, b.p, nullptr, nullptr, DataType::kFloat32, nullptr), InvalidArgument);
  try {
    c.all_reduce(a.p, b.p, (size_t(4) << 20), DataType::kFloat32, ReduceOp::kSum, nullptr, Algo::kLL);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("ll carries at most"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(c.all_reduce(a.p, b.p, 0, DataType::kFloat32, ReduceOp::kSum, nullptr));
}
