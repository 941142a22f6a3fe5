// Random cases of the overlapped tensor-parallel GEMMs (Overlap.RandomShapesFormsAndCallOrders),
// drawn from one seed: on one TensorParallel, one to three calls of either operation one after
// another, each of its own shape within the object's maxima (any rows a rank from 1, K and Nc any
// multiples of 8, or whole 256-row units that the own GEMM's forms take: half the cases ask for
// those forms where they can run), dtype, mode and reduce op, its operands at a 16-byte offset into
// plain or symmetric memory, the gathered A asked for or not; between calls, nothing, an all-reduce, or a call of a second TensorParallel; eager (on a
// stream of the test's or the legacy default stream) or captured once and replayed with new data.
// The knobs that ranks must set alike are drawn once for all ranks; those the library calls
// rank-local (SYMMEM_OVERLAP_GROUPS, the own GEMM's tiles, raster, epilogue, polls and counts) are
// drawn for each rank apart, so that they differ across ranks as the header allows. Each call is
// checked against the host reference, its output poisoned first.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include "overlap_check.hpp"

using namespace symmem;
using namespace symmem::test;

namespace {

// One call of a case.
struct Call {
  overlap::Op op;
  int64_t rows, k, nc;  // rows a rank: M = rows x ranks
  DataType dt;
  overlap::Mode mode;
  ReduceOp rop;        // matmul_reduce_scatter's
  bool a_out;          // all_gather_matmul: the gathered A asked for
  int between;         // after the call: 0 nothing, 1 an int32 all-reduce, 2 a second object's all_gather_matmul
};

struct Case {
  int64_t max_m, max_k, max_n;
  std::vector<Call> calls;
  bool graph, legacy_stream, symmetric;
  size_t off;  // bytes (a multiple of 16) from every operand buffer's start
  std::vector<std::pair<const char*, std::string>> alike, own;  // knobs: the same on every rank; this rank's
};

// Device memory of the test's (cudaMalloc) or from the symmetric heap (collective: every rank
// allocates the same sizes in the same order); freed at the end of its scope.
struct Operand {
  std::unique_ptr<DeviceBuffer> plain;
  SymmetricBuffer sym;
  size_t off;
  Operand(size_t bytes, bool symmetric, size_t offset) : off(offset) {
    if (symmetric) sym = comm().alloc(bytes + offset);
    else plain = std::make_unique<DeviceBuffer>(bytes + offset);
  }
  ~Operand() {
    if (sym.valid()) comm().free(sym);
  }
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  size_t bytes() const { return (plain ? plain->n : sym.bytes()) - off; }
  void* p() const { return static_cast<char*>(plain ? plain->p : sym.ptr()) + off; }
};

uint64_t seed_of(uint64_t c, int it, size_t call, int r, int part) {
  return (((c * 8 + it) * 8 + call) * 64 + r) * 80 + part + 17;
}

// The second object's all_gather_matmul between calls: 64 rows a rank, K = Nc = 64, bf16, small
// integers in A and B so that every sum is exact: rank r's shard row i, column j holds
// (i * 3 + j + r) % 5 - 2, B's row j column l (j * 7 + l) % 3 - 1.
constexpr int kSide = 64;
float side_a(int r, int i, int j) { return static_cast<float>((i * 3 + j + r) % 5 - 2); }
float side_b(int j, int l) { return static_cast<float>((j * 7 + l) % 3 - 1); }

std::string run_case(const Case& cs, uint64_t case_seed, std::map<std::string, int>* forms) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  std::vector<std::unique_ptr<ScopedEnv>> env;
  for (const auto& kv : cs.alike) env.push_back(std::make_unique<ScopedEnv>(kv.first, kv.second.c_str()));
  for (const auto& kv : cs.own) env.push_back(std::make_unique<ScopedEnv>(kv.first, kv.second.c_str()));
  overlap::TensorParallel tp(c, cs.max_m, cs.max_k, cs.max_n);
  std::unique_ptr<overlap::TensorParallel> side;
  bool sides = false;
  for (const Call& k : cs.calls) sides |= k.between == 2;
  if (sides) side = std::make_unique<overlap::TensorParallel>(c, kSide * n, kSide, kSide);
  for (const Call& k : cs.calls) ++(*forms)[overlap::form_name(tp.form(k.op, k.rows * n, k.k, k.nc, k.mode, k.dt))];

  // Operands: A (the shard or the whole), B, C (whole or shard), the gathered A.
  const size_t nk = cs.calls.size();
  std::vector<std::unique_ptr<Operand>> a(nk), b(nk), out(nk), a_out(nk), side_out(nk);
  for (size_t i = 0; i < nk; ++i) {
    const Call& k = cs.calls[i];
    const int64_t m = k.rows * n;
    const bool ag = k.op == overlap::Op::kAllGatherMatmul;
    a[i] = std::make_unique<Operand>((ag ? k.rows : m) * k.k * 2, cs.symmetric, cs.off);
    b[i] = std::make_unique<Operand>(k.k * k.nc * 2, cs.symmetric, cs.off);
    out[i] = std::make_unique<Operand>((ag ? m : k.rows) * k.nc * 2, cs.symmetric, cs.off);
    if (ag && k.a_out) a_out[i] = std::make_unique<Operand>(m * k.k * 2, cs.symmetric, cs.off);
    if (k.between != 0) side_out[i] = std::make_unique<Operand>(k.between == 1 ? kSideCount * 4 : kSide * n * kSide * 2, false, 0);
  }
  // The all-reduce's input and the second object's (fixed: a graph replays them).
  DeviceBuffer ar_in(kSideCount * 4), side_a_in(kSide * kSide * 2), side_b_in(kSide * kSide * 2);
  upload_side_input(ar_in.p, me);
  std::vector<uint8_t> sa(kSide * kSide * 2), sb(kSide * kSide * 2);
  for (int i = 0; i < kSide; ++i)
    for (int j = 0; j < kSide; ++j) {
      from_float(DataType::kBFloat16, side_a(me, i, j), &sa[2 * (i * kSide + j)]);
      from_float(DataType::kBFloat16, side_b(i, j), &sb[2 * (i * kSide + j)]);
    }
  upload(side_a_in.p, sa);
  upload(side_b_in.p, sb);

  cudaStream_t s = nullptr;
  if (!cs.legacy_stream) SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t exec = nullptr;
  auto enqueue = [&] {
    for (size_t i = 0; i < nk; ++i) {
      const Call& k = cs.calls[i];
      const int64_t m = k.rows * n;
      if (k.op == overlap::Op::kAllGatherMatmul)
        tp.all_gather_matmul(a[i]->p(), m, k.k, b[i]->p(), k.nc, out[i]->p(), a_out[i] ? a_out[i]->p() : nullptr, s, k.mode, k.dt);
      else
        tp.matmul_reduce_scatter(a[i]->p(), m, k.k, b[i]->p(), k.nc, out[i]->p(), k.rop, s, k.mode, k.dt);
      if (k.between == 1) c.all_reduce(ar_in.p, side_out[i]->p(), kSideCount, DataType::kInt32, ReduceOp::kSum, s);
      if (k.between == 2) side->all_gather_matmul(side_a_in.p, kSide * n, kSide, side_b_in.p, kSide, side_out[i]->p(), nullptr, s);
    }
  };
  // One iteration's inputs, run, and check: this rank's mismatch ("" where it matched).
  auto iteration = [&](int it) -> std::string {
    // Every rank's operands that this rank's results depend on, regenerated from their seeds.
    std::vector<std::vector<std::vector<float>>> ins(nk);  // [call][j]: AG: shards of ranks 0..n-1, then B_me;
                                                          // RS: block me of ranks 0..n-1's A, then their B
    for (size_t i = 0; i < nk; ++i) {
      const Call& k = cs.calls[i];
      std::vector<uint8_t> bytes, mine;
      if (k.op == overlap::Op::kAllGatherMatmul) {
        for (int r = 0; r < n; ++r) {
          ins[i].push_back(rand_half(k.dt, k.rows * k.k, seed_of(case_seed, it, i, r, 0), &bytes));
          if (r == me) upload(a[i]->p(), bytes);
        }
        ins[i].push_back(rand_half(k.dt, k.k * k.nc, seed_of(case_seed, it, i, me, 1), &bytes));
        upload(b[i]->p(), bytes);
        if (a_out[i]) SYMMEM_CUDA_CHECK(cudaMemset(a_out[i]->p(), kPoison, a_out[i]->bytes()));
      } else {
        // Rank r's A is n blocks of rows, block q from seed (r, 2 + q).
        for (int r = 0; r < n; ++r) ins[i].push_back(rand_half(k.dt, k.rows * k.k, seed_of(case_seed, it, i, r, 2 + me), &bytes));
        for (int q = 0; q < n; ++q) {
          rand_half(k.dt, k.rows * k.k, seed_of(case_seed, it, i, me, 2 + q), &bytes);
          mine.insert(mine.end(), bytes.begin(), bytes.end());
        }
        upload(a[i]->p(), mine);
        for (int r = 0; r < n; ++r) {
          ins[i].push_back(rand_half(k.dt, k.k * k.nc, seed_of(case_seed, it, i, r, 1), &bytes));
          if (r == me) upload(b[i]->p(), bytes);
        }
      }
      SYMMEM_CUDA_CHECK(cudaMemset(out[i]->p(), kPoison, out[i]->bytes()));
      if (side_out[i]) SYMMEM_CUDA_CHECK(cudaMemset(side_out[i]->p(), kPoison, side_out[i]->bytes()));
    }
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    if (cs.graph) {
      if (exec == nullptr) exec = capture_graph(s, enqueue);
      SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
    } else {
      enqueue();
    }
    ctx()->synchronize(s, "random overlap case");
    for (size_t i = 0; i < nk; ++i) {
      const Call& k = cs.calls[i];
      const int64_t m = k.rows * n;
      const std::string at = "call " + std::to_string(i) + ", iteration " + std::to_string(it) + ": ";
      std::vector<double> ref, mag;
      if (k.op == overlap::Op::kAllGatherMatmul) {
        ref.assign(m * k.nc, 0.0), mag.assign(m * k.nc, 0.0);
        for (int r = 0; r < n; ++r)
          gemm_reference(ins[i][r].data(), ins[i][n].data(), k.rows, k.k, k.nc, n, &ref[r * k.rows * k.nc], &mag[r * k.rows * k.nc]);
        if (a_out[i]) {
          const std::vector<uint8_t> g = download(a_out[i]->p(), m * k.k * 2);
          for (int64_t e = 0; e < m * k.k; ++e)
            if (to_float(k.dt, &g[2 * e]) != ins[i][e / (k.rows * k.k)][e % (k.rows * k.k)])
              return at + "all_gather_matmul's gathered A differs at element " + std::to_string(e);
        }
      } else {
        ref.assign(k.rows * k.nc, 0.0), mag.assign(k.rows * k.nc, 0.0);
        for (int r = 0; r < n; ++r) gemm_reference(ins[i][r].data(), ins[i][n + r].data(), k.rows, k.k, k.nc, n, ref.data(), mag.data());
        if (k.rop == ReduceOp::kAvg)
          for (double& x : ref) x /= n;
      }
      const std::string bad = compare(k.dt, download(out[i]->p(), ref.size() * 2), ref, mag);
      if (!bad.empty())
        return at + (k.op == overlap::Op::kAllGatherMatmul ? "all_gather_matmul: " : "matmul_reduce_scatter: ") + bad;
      if (k.between == 1) {
        const std::string bad = side_sum_mismatch(side_out[i]->p(), n);
        if (!bad.empty()) return at + "the all-reduce after it: " + bad;
      } else if (k.between == 2) {
        const std::vector<uint8_t> g = download(side_out[i]->p(), side_out[i]->bytes());
        for (int row = 0; row < kSide * n; ++row)
          for (int l = 0; l < kSide; ++l) {
            float want = 0;
            for (int j = 0; j < kSide; ++j) want += side_a(row / kSide, row % kSide, j) * side_b(j, l);
            const float got = to_float(DataType::kBFloat16, &g[2 * (row * kSide + l)]);
            if (got != want)
              return at + "the second object's all_gather_matmul after it: C[" + std::to_string(row) + ", " + std::to_string(l) + "] = " +
                     std::to_string(got) + ", want " + std::to_string(want);
          }
      }
    }
    return std::string();
  };
  std::string why;
  for (int it = 0; it < (cs.graph ? 3 : 2) && why.empty(); ++it) why = agreed_step([&] { return iteration(it); });
  if (exec) cudaGraphExecDestroy(exec);
  if (s) cudaStreamDestroy(s);
  return why;
}

// The rows a rank of a call: whole 256-row units (the own GEMM's) or any count from 1.
int64_t draw_rows(std::mt19937_64& g, bool units) {
  if (units) return 256 * (1 + static_cast<int64_t>(g() % 3));
  return 1 + static_cast<int64_t>(g() % (g() % 2 == 0 ? 16 : 300));
}
int64_t round8(int64_t v) { return std::max<int64_t>(8, v / 8 * 8); }

// A case (every rank draws the same from the shared generator g; the rank-local knobs from a
// generator of this rank's own).
Case draw_case(std::mt19937_64& g, int n, bool shared) {
  Case cs;
  // Half the cases where the own GEMM's forms can run (a GPU a rank, or 2 ranks sharing one with
  // SYMMEM_OVERLAP_OWN_SHARED=1, as the ctest entry multigpu_own_gemm_2ranks_1gpu; at more ranks a
  // GPU such runs are not dependable, docs/HISTORY.md "Measured in session 50") ask for them: calls
  // in 256-row units, mostly bf16 and in overlap mode, SYMMEM_OVERLAP_GEMM=own mostly.
  const bool own_case = n >= 2 && (!shared || n == 2) && g() % 2 == 0;
  const bool units = own_case || g() % 3 == 0;
  const int calls = 1 + static_cast<int>(g() % 3);
  for (int i = 0; i < calls; ++i) {
    Call k;
    k.op = g() % 2 == 0 ? overlap::Op::kAllGatherMatmul : overlap::Op::kMatmulReduceScatter;
    k.rows = draw_rows(g, units);
    k.k = 8 * (1 + static_cast<int64_t>(g() % (1u << (g() % 8))));
    k.nc = 8 * (1 + static_cast<int64_t>(g() % (1u << (g() % 9))));
    // The host reference's work: every rank's A rows this rank needs, and the products.
    while (int64_t{n} * k.rows * n * k.k > (int64_t{1} << 24) && k.k > 8) k.k = round8(k.k / 2);
    while (k.rows * n * k.k * k.nc > (int64_t{1} << 25) && k.nc > 8) k.nc = round8(k.nc / 2);
    k.dt = g() % (own_case ? 5 : 3) == 0 ? DataType::kFloat16 : DataType::kBFloat16;
    const int mode = static_cast<int>(g() % (own_case ? 6 : 4));
    k.mode = mode == 0 ? overlap::Mode::kSequential : mode == 1 ? overlap::Mode::kAuto : overlap::Mode::kOverlap;
    k.rop = g() % 3 == 0 ? ReduceOp::kAvg : ReduceOp::kSum;
    k.a_out = g() % 2 == 0;
    k.between = g() % 4 == 0 ? 1 + static_cast<int>(g() % 2) : 0;
    cs.calls.push_back(k);
  }
  int64_t rows = 0;
  cs.max_k = cs.max_n = 0;
  for (const Call& k : cs.calls) rows = std::max(rows, k.rows), cs.max_k = std::max(cs.max_k, k.k), cs.max_n = std::max(cs.max_n, k.nc);
  cs.max_m = n * (rows + (g() % 2 == 0 ? 0 : static_cast<int64_t>(g() % 64)));
  cs.max_k += 8 * static_cast<int64_t>(g() % 3);
  cs.max_n += 8 * static_cast<int64_t>(g() % 3);
  cs.graph = g() % 3 == 0;
  cs.legacy_stream = !cs.graph && g() % 5 == 0;
  cs.symmetric = g() % 3 == 0;
  cs.off = g() % 2 == 0 ? 0 : 16 * static_cast<size_t>(g() % 16);
  // The knobs every rank must set alike.
  auto pick = [&](const char* name, std::initializer_list<const char*> values) {
    const size_t i = g() % (values.size() + 1);  // (the last: unset)
    if (i < values.size()) cs.alike.emplace_back(name, *(values.begin() + i));
  };
  pick("SYMMEM_OVERLAP_RS", {"ring", "sum"});
  if (!own_case) pick("SYMMEM_OVERLAP_GEMM", {"own", "cublas"});
  else if (g() % 4 != 0) cs.alike.emplace_back("SYMMEM_OVERLAP_GEMM", "own");
  pick("SYMMEM_OVERLAP_OWN_RS", {"ring", "fused"});
  if (g() % 3 == 0) cs.alike.emplace_back("SYMMEM_OVERLAP_RS_CHUNKS", std::to_string(1 + g() % overlap::detail::kMaxRsChunks));
  if (g() % 6 == 0) cs.alike.emplace_back("SYMMEM_OVERLAP_RS_BARRIER", "1");
  if (own_case && shared) cs.alike.emplace_back("SYMMEM_OVERLAP_OWN_SHARED", "1");
  // Rank-local knobs, this rank's own draw.
  std::mt19937_64 mine(g() + 7919 * static_cast<uint64_t>(comm().rank()));
  auto own = [&](const char* name, std::initializer_list<const char*> values) {
    if (mine() % 3 == 0) cs.own.emplace_back(name, *(values.begin() + mine() % values.size()));
  };
  own("SYMMEM_OVERLAP_GROUPS", {"0", "1"});
  own("SYMMEM_OVERLAP_GEMM_T", {"0", "1"});
  own("SYMMEM_OVERLAP_RS_GEMM_T", {"0", "1"});
  own("SYMMEM_OVERLAP_GEMM_T_TALL", {"0", "2"});
  own("SYMMEM_OVERLAP_RS_STRADDLE", {"0", "1"});
  own("SYMMEM_OVERLAP_RS_SUM_RING", {"0", "1"});
  own("SYMMEM_OVERLAP_DEFER", {"0", "1", "2"});
  own("SYMMEM_OVERLAP_COUNT_AT", {"1", "3", "8"});
  own("SYMMEM_OVERLAP_RS_RASTER", {"1", "2", "8"});
  own("SYMMEM_OVERLAP_AG_RASTER", {"1", "2", "8"});
  own("SYMMEM_OVERLAP_QUIET_NS", {"0", "1000"});
  return cs;
}

std::string describe(const Case& cs, int c, int n) {
  std::ostringstream o;
  o << "case " << c << " (max " << cs.max_m << " x " << cs.max_k << " x " << cs.max_n << (cs.graph ? ", graph" : "")
    << (cs.legacy_stream ? ", legacy stream" : "") << (cs.symmetric ? ", symmetric operands" : "") << ", offset " << cs.off;
  for (const auto& kv : cs.alike) o << ", " << kv.first << "=" << kv.second;
  o << "; calls:";
  for (const Call& k : cs.calls)
    o << " [" << (k.op == overlap::Op::kAllGatherMatmul ? "ag" : "rs") << " M " << k.rows * n << " K " << k.k << " Nc " << k.nc << " "
      << dtype_name(k.dt) << " mode " << static_cast<int>(k.mode) << (k.op == overlap::Op::kMatmulReduceScatter && k.rop == ReduceOp::kAvg ? " avg" : "")
      << (k.op == overlap::Op::kAllGatherMatmul && k.a_out ? " a_out" : "")
      << (k.between == 1 ? ", then an all-reduce" : k.between == 2 ? ", then a second object's call" : "") << "]";
  o << ")";
  return o.str();
}

}  // namespace

TEST(Overlap, RandomShapesFormsAndCallOrders) {
  const int n = comm().size();
  const bool shared = comm().shares_gpu();
  const int cases = n > 4 ? 28 : 48;
  std::mt19937_64 g(20261202);
  std::map<std::string, int> forms;
  int calls = 0, graphs = 0, betweens = 0, symmetric = 0, unit_rows = 0;
  std::string why;
  for (int c = 0; c < cases && why.empty(); ++c) {
    const Case cs = draw_case(g, n, shared);
    // This rank's knobs, named where it fails.
    if (std::getenv("SYMMEM_TEST_CASES") != nullptr && comm().rank() == 0) std::fprintf(stderr, "[case] %s\n", describe(cs, c, n).c_str());
    std::string mine;
    for (const auto& kv : cs.own) mine += std::string(mine.empty() ? "" : " ") + kv.first + "=" + kv.second;
    why = agreed_step([&] {
      const std::string bad = run_case(cs, static_cast<uint64_t>(c) + 1, &forms);
      return bad.empty() ? bad : bad + (mine.empty() ? "" : " (this rank's knobs: " + mine + ")");
    });
    if (!why.empty()) why = describe(cs, c, n) + ": " + why;
    calls += static_cast<int>(cs.calls.size()), graphs += cs.graph, symmetric += cs.symmetric;
    for (const Call& k : cs.calls) betweens += k.between != 0, unit_rows += k.rows % 256 == 0;
  }
  if (why.empty() && comm().rank() == 0) {
    std::string f;
    for (const auto& kv : forms) f += std::string(f.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second);
    std::printf("random overlap: %d cases, %d calls ran and checked (%d graphs, %d with symmetric operands, %d calls in 256-row units, "
                "%d with a call between); rank 0's forms: %s\n",
                cases, calls, graphs, symmetric, unit_rows, betweens, f.c_str());
  }
  ASSERT_ALL(why.empty(), why);
}
