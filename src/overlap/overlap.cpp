// Overlapped tensor-parallel GEMMs (symmem/overlap.hpp says what each does).
//
// Why the signals need no epochs (they are set to 1, waited for, and zeroed in every call), for
// any N and any interleaving: every call starts with a barrier on the compute stream (but
// matmul_reduce_scatter's fused forms, below). A rank zeroes its slots at the end of call k, on
// its compute stream, after its waits; a peer sets a slot of call k + 1 only after that call's
// barrier, which this rank reaches after the zeroing. The same barrier orders the data: a peer
// writes this rank's gathered rows / landing slots of call k + 1 only after this rank has passed
// call k's GEMMs, which precede the barrier in its stream. matmul_reduce_scatter's fused forms
// (Form::kFused, kFusedT) start without the barrier: their pushes wait for credits, counts of the
// recv calls each peer has ended, which every form that uses recv hands out at its end
// (credits.cuh has the argument, the sequential form included).
// (matmul_reduce_scatter's ring signals each part of each step, slots t * chunks + c, and zeroes
// them all; the barrier's own slots lie past the user slots.) The local staging of
// matmul_reduce_scatter (the ring's partial sums before the copy engine carries them) is
// rewritten in call k + 1 only after call k's copies finished: call k ends by joining the side
// stream into the compute stream.
//
// all_gather_matmul has two GEMM lanes. The peers' row blocks run one after another on a
// high-priority lane (forked from the caller's stream after the barrier, joined before the end);
// the local rows' GEMM runs on the caller's stream at its own (normal) priority from the start, so
// it takes the SMs that the peers' GEMMs leave idle (while their rows are still travelling, and in
// their last, partial wave). A block GEMM alone is small (at TP = 4, 8B: 2048 x 3584 x 4096 is 1.7
// waves of 128 x 256 tiles on 132 SMs; 78-81 us against a quarter of the full GEMM's 273): back to
// back on one stream the N blocks cost ~15-20% over the floor. The blocks touch disjoint rows of C
// and each lane has its own cuBLASLt workspace, so they may run at once. Measured at 4 x H200
// against one stream (bench/results/*-h200x4-*-overlap.json): 8B M 16384 1.207 -> 1.104 x the
// floor, 70B M 8192 1.106 -> 1.054, smaller shapes within +-4%. matmul_reduce_scatter keeps one
// stream: there the local GEMM running beside the peers' delayed their copies (8B M 8192: 1.19 ->
// 1.42 x the floor); its ring is one chain of GEMMs in any case. The side stream (copies,
// signals) is high-priority: its one-thread signal kernels must not queue behind GEMM tiles.
#include "symmem/overlap.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "../runtime/driver.hpp"
#include "../runtime/agree.hpp"
#include "../runtime/call_scope.hpp"
#include "../runtime/log.hpp"
#include "credits.cuh"
#include "gemm.hpp"
#include "hopper_gemm.hpp"
#include "overlap_kernels.hpp"
#include "symmem/env.hpp"
#include "symmem/error.hpp"
#include "symmem/stream.hpp"

namespace symmem::overlap {

struct TensorParallel::Impl {
  explicit Impl() : gemm(size_t(32) << 20), gemm2(size_t(32) << 20) {}
  Gemm gemm, gemm2;  // the caller's stream's, the lane's (all_gather_matmul's peers): a workspace each
  SymmetricBuffer gathered, recv;
  void* staging = nullptr;  // matmul_reduce_scatter: the peers' partial rows before they travel (local)
  int64_t max_m = 0, max_k = 0, max_n = 0;
  cudaStream_t side = nullptr, lane = nullptr;  // copies and signals; the peers' GEMMs (both high priority)
  cudaEvent_t start = nullptr, done = nullptr, fork = nullptr, join = nullptr;
  // Forks the lane from s (after what s holds now) / joins it back into s.
  void fork_lane(cudaStream_t s) {
    SYMMEM_CUDA_CHECK(cudaEventRecord(fork, s));
    SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(lane, fork, 0));
  }
  void join_lane(cudaStream_t s) {
    SYMMEM_CUDA_CHECK(cudaEventRecord(join, lane));
    SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(s, join, 0));
  }
  int sms = 132;
  // SYMMEM_OVERLAP_RS / SYMMEM_OVERLAP_GROUPS, read once here: -1 unset (the shape decides), else
  // 0 / 1 (rs: sum / ring; groups: one GEMM a shard / the groups' model at any size).
  int force_rs = -1, force_groups = -1;
  // all_gather_matmul's overlap as one persistent GEMM of symmem's own over all rows (hopper_gemm:
  // its tiles wait for their shard's signal) where it can run (a Hopper GPU to each rank, shards
  // of a multiple of 256 rows, signals written by the stream): SYMMEM_OVERLAP_GEMM=own / cublas
  // forces it on / off, unset lets detail::gather_own_gemm decide. A rank-local choice: both forms
  // move the rows and signal them alike.
  int own_gemm = -1;
  // SYMMEM_OVERLAP_GEMM_T=1 / 0: all_gather_matmul's own form in hopper_gemm_t's transposed tiles or
  // hopper_gemm's (-1 unset: detail::gather_transposed decides). Rank-local.
  int own_t = -1;
  // SYMMEM_OVERLAP_RS_GEMM_T=1 / 0: matmul_reduce_scatter's fused form (not the ring) on hopper_gemm_t
  // or hopper_gemm (-1 unset: detail::reduce_transposed decides). Rank-local: the pushes, their
  // groups and signals are the same; only the GEMM and its counts' targets differ.
  int rs_t = -1;
  // SYMMEM_OVERLAP_GEMM_T_TALL=t: hopper_gemm_t's shards in t tiles of 160 rows, then tiles of 128
  // (-1 unset: schedule::t_choose_tall's count). Rank-local.
  int t_tall = -1;
  // SYMMEM_OVERLAP_RS_STRADDLE=1 / 0: the fused form in transposed tiles at 2 ranks with or without
  // the straddle (HopperRowShards::straddle, wherever it applies; -1 unset: hopper_t_straddle's
  // model). Rank-local: a rank's tiles and counts' targets change, not what it pushes, when, or
  // where (a row group is pushed once all of it is in C, however its tiles lie).
  int straddle = -1;
  // SYMMEM_OVERLAP_RS_SUM_RING=1: the fused form in transposed tiles adds the peers' partials through
  // the GEMM's stage ring (HopperRowShards::sum_in_ring, as until session 63 at 3+ ranks; no
  // straddle then) instead of through the summing consumer's C slots. For measurements; rank-local:
  // how a rank sums its own block, not what it pushes or when.
  bool sum_ring = false;
  // SYMMEM_OVERLAP_OWN_RS=fused / ring: that own-GEMM form of matmul_reduce_scatter wherever the own
  // GEMM fits (-1 unset: detail::reduce_own_gemm decides, and only the fused form). Compared across
  // ranks: the two forms push to different ranks and slots.
  int own_rs = -1;
  // The fused form's HopperGemmOptions::count_at (SYMMEM_OVERLAP_COUNT_AT=kb; -1 unset: its
  // default). A rank-local setting: it moves when a rank's counts come, not what they count.
  // (Session 49, 1 x H200, the fused form's GEMM looped back at 8B M 8192 with the deferred
  // epilogue: k-block 3 1.056-1.059x cuBLASLt, 5 1.049, 8 1.043; not measured in the operation.)
  int count_at = -1;
  // The fused forms' raster, HopperGemmOptions::group_m (SYMMEM_OVERLAP_RS_RASTER=g; -1 unset:
  // detail::reduce_raster). Rank-local: it orders a rank's tiles, not what any rank waits for or
  // pushes (the pushes wait for counts, whatever order the tiles come in).
  int rs_raster = -1;
  // all_gather_matmul's own GEMM's raster (SYMMEM_OVERLAP_AG_RASTER=g; -1 unset: HopperGemmOptions'
  // default, 8, clipped to a shard's units). Rank-local as rs_raster; the form's choice
  // (detail::gather_transposed) models the default whatever it says.
  int ag_raster = -1;
  // HopperRowShards::quiet_ns for the own GEMMs' signal waits (SYMMEM_OVERLAP_QUIET_NS=ns; 0 unset:
  // acquire polls back to back). Rank-local: how a rank polls, not what it waits for.
  unsigned quiet_ns = 0;
  // HopperGemmOptions::defer_halves for both forms (SYMMEM_OVERLAP_DEFER=0|1|2; -1 unset: its
  // default). Rank-local: it moves when a tile's stores go out, not what any rank waits for.
  int defer = -1;
  // The cuBLASLt ring's parts a step (SYMMEM_OVERLAP_RS_CHUNKS=1..8; 0 unset: detail::rs_chunks by
  // the shape). Compared across ranks: the parts' signal slots must match.
  int rs_chunks = 0;
  // SYMMEM_OVERLAP_RS_BARRIER=1: the fused forms start with the call's barrier as the others do
  // (their credits then pass at once; for measurements). Compared across ranks: a barrier is collective.
  bool rs_barrier = false;
  bool own_gemm_ok = false;  // the GPU, the team and the driver allow it (the shape is checked per call)
  bool own_shared = false;   // SYMMEM_OVERLAP_OWN_SHARED=1: also where ranks share a GPU (tests)
  // matmul_reduce_scatter's fused form on the own GEMM: the GEMM counts each row group's stored
  // half tiles here (HopperRowShards::done, a word a rank and row group, zeroed at the end of each
  // call), and the copy engine's push of a row group waits for its count on its peer's stream of
  // `pushers` (cuStreamWaitValue64).
  unsigned long long* stored = nullptr;  // (allocated where own_rs_all)
  int stored_words = 0;
  // own_gemm_ok and the driver's stream wait on every rank (the fused form is not wire-compatible
  // with the others: every rank must take it or none). Agreed at construction.
  bool own_rs_all = false;
  // Its pushes: one stream a peer (high priority), so that one peer's wait for a count does not
  // hold back another's push (a stream wait returns 7-25 us after the count, session 33), each
  // joined back through its event.
  std::vector<cudaStream_t> pushers;
  std::vector<cudaEvent_t> pushed;
  symmem::detail::StreamWaitValue64 wait64 = nullptr;
};

// A forcing knob: unset or empty -1, else one of two spellings (0 / 1); anything else is added to
// `why` (the constructor's refusal, which every rank hears) and reads as unset.
static int force_knob(std::string& why, const char* name, const char* off, const char* on, const char* unset = "the shape's choice") {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return -1;
  if (std::strcmp(v, off) == 0) return 0;
  if (std::strcmp(v, on) == 0) return 1;
  symmem::detail::add_reason(why, std::string(name) + "=" + v + " is neither " + off + " nor " + on + "; unset it for " + unset);
  return -1;
}

// The own GEMM's options for the overlap's forms. Their copies need no SM between GPUs (copy-engine
// copies to a peer, stream writes), but where ranks share a GPU (SYMMEM_OVERLAP_OWN_SHARED=1,
// tests) a copy to a peer is a copy within one GPU, which the driver may run as a kernel: with
// every SM held by a GEMM whose tiles wait for such copies it never ran (session 55, the epilogue
// ring at 3 ranks on one H200: one rank's GEMM stuck over 200 s at 144 units on 66 clusters, while
// small shapes, and 3 and 4 "ranks" of one process on a part of the SMs, passed). There the GEMM
// leaves two clusters' SMs free.
// (defer: SYMMEM_OVERLAP_DEFER, -1 unset; sms: the GPU's.)
static HopperGemmOptions own_options(int defer, bool shares_gpu, int sms) {
  HopperGemmOptions opt;
  if (defer >= 0) opt.defer_halves = defer;
  if (shares_gpu) opt.max_ctas = std::max(2, sms - 4);
  return opt;
}

TensorParallel::TensorParallel(Communicator& comm, int64_t max_m, int64_t max_k, int64_t max_n)
    : comm_(comm), impl_(std::make_unique<Impl>()) {
  symmem::detail::DeviceGuard device(comm.context().device());
  // What a rank refuses (its arguments, a misspelt knob) goes to every rank through the exchange
  // below, so that none is left waiting in it for a rank that threw.
  std::string why;
  if (max_m <= 0 || max_k <= 0 || max_n <= 0)
    why = "max_m, max_k and max_n must be positive (got " + std::to_string(max_m) + ", " + std::to_string(max_k) + ", " + std::to_string(max_n) + ")";
  if (comm.size() * detail::kMaxRsChunks > kCreditSlot)  // (the ring's signal slots lie below the credits)
    symmem::detail::add_reason(why, "too many ranks (" + std::to_string(comm.size()) + ") for the signal slots; at most " +
                                        std::to_string(kCreditSlot / detail::kMaxRsChunks));
  Impl& d = *impl_;
  d.max_m = max_m;
  d.max_k = max_k;
  d.max_n = max_n;
  d.force_rs = force_knob(why, "SYMMEM_OVERLAP_RS", "sum", "ring");
  d.force_groups = force_knob(why, "SYMMEM_OVERLAP_GROUPS", "0", "1");
  d.own_gemm = force_knob(why, "SYMMEM_OVERLAP_GEMM", "cublas", "own");
  d.own_rs = force_knob(why, "SYMMEM_OVERLAP_OWN_RS", "fused", "ring");
  d.own_t = force_knob(why, "SYMMEM_OVERLAP_GEMM_T", "0", "1");
  d.rs_t = force_knob(why, "SYMMEM_OVERLAP_RS_GEMM_T", "0", "1");
  d.t_tall = static_cast<int>(symmem::detail::knob_number(why, "SYMMEM_OVERLAP_GEMM_T_TALL", 0, 1 << 20, -1));
  d.straddle = force_knob(why, "SYMMEM_OVERLAP_RS_STRADDLE", "0", "1");
  d.sum_ring = force_knob(why, "SYMMEM_OVERLAP_RS_SUM_RING", "0", "1") == 1;
  d.count_at = static_cast<int>(symmem::detail::knob_number(why, "SYMMEM_OVERLAP_COUNT_AT", 0, 1 << 20, -1));
  d.rs_raster = static_cast<int>(symmem::detail::knob_number(why, "SYMMEM_OVERLAP_RS_RASTER", 1, 64, -1));
  d.ag_raster = static_cast<int>(symmem::detail::knob_number(why, "SYMMEM_OVERLAP_AG_RASTER", 1, 64, -1));
  d.defer = static_cast<int>(symmem::detail::knob_number(why, "SYMMEM_OVERLAP_DEFER", 0, 2, -1));
  d.quiet_ns = static_cast<unsigned>(symmem::detail::knob_number(why, "SYMMEM_OVERLAP_QUIET_NS", 0, 100000, 0));
  d.rs_chunks = static_cast<int>(symmem::detail::knob_number(why, "SYMMEM_OVERLAP_RS_CHUNKS", 1, detail::kMaxRsChunks, 0));
  int dev = 0;
  SYMMEM_CUDA_CHECK(cudaGetDevice(&dev));
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev));
  // The persistent GEMM holds every SM while it waits for peers' rows: only where no other rank's
  // kernels need this GPU to send them, and where the copies' signals need no SM either.
  // SYMMEM_OVERLAP_OWN_SHARED=1 lifts the first condition for tests of the forms' protocol on one
  // GPU: ranks sharing a GPU are processes, each with its own context, which the driver runs in
  // turn (time slices), so a rank's waiting GEMM is swapped out for the rank it waits for: correct,
  // and many times slower. (shares_gpu is the same on every rank; the knob is compared below.)
  d.own_shared = force_knob(why, "SYMMEM_OVERLAP_OWN_SHARED", "0", "1", "the default (0)") == 1;
  d.rs_barrier = force_knob(why, "SYMMEM_OVERLAP_RS_BARRIER", "0", "1", "the default (0)") == 1;
  d.own_gemm_ok = hopper_gemm_supported(dev) && (!comm.shares_gpu() || d.own_shared) && symmem::detail::stream_write_value64() != nullptr;
  d.wait64 = symmem::detail::stream_wait_value64();
  // What each rank can run and was told, gathered before anything is allocated: the fused
  // reduce-scatter runs only where every rank can; a refusal on any rank, or arguments or knobs
  // set differently across ranks (SYMMEM_OVERLAP_GROUPS is rank-local), are refused on all of them.
  const bool own_rs_ok = d.own_gemm_ok && d.wait64 != nullptr;
  const std::string mine = "max_m=" + std::to_string(max_m) + " max_k=" + std::to_string(max_k) + " max_n=" + std::to_string(max_n) +
                           " SYMMEM_OVERLAP_RS=" + std::to_string(d.force_rs) + " SYMMEM_OVERLAP_GEMM=" + std::to_string(d.own_gemm) +
                           " SYMMEM_OVERLAP_OWN_RS=" + std::to_string(d.own_rs) + " SYMMEM_OVERLAP_OWN_SHARED=" + std::to_string(d.own_shared) +
                           " SYMMEM_OVERLAP_RS_CHUNKS=" + std::to_string(d.rs_chunks) + " SYMMEM_OVERLAP_RS_BARRIER=" + std::to_string(d.rs_barrier);
  const auto can = comm.team().require_same(mine, "overlap::TensorParallel's arguments and knobs", why, own_rs_ok ? "1" : "0",
                                            "; set each alike on every rank or on none");
  d.own_rs_all = std::all_of(can.begin(), can.end(), [](const std::string& f) { return f == "1"; });
  try {
    d.gathered = comm.alloc(symmem::detail::checked_mul(symmem::detail::checked_mul(static_cast<size_t>(max_m), static_cast<size_t>(max_k), "max_m x max_k"), 2,
                                                "gathered A bytes"));
    d.recv = comm.alloc(symmem::detail::checked_mul(symmem::detail::checked_mul(static_cast<size_t>(max_m), static_cast<size_t>(max_n), "max_m x max_n"), 2,
                                            "landing slot bytes"));
    SYMMEM_CUDA_CHECK(cudaMalloc(&d.staging, static_cast<size_t>(max_m) * static_cast<size_t>(max_n) * 2));
    int least = 0, greatest = 0;
    SYMMEM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SYMMEM_CUDA_CHECK(cudaStreamCreateWithPriority(&d.side, cudaStreamNonBlocking, greatest));
    SYMMEM_CUDA_CHECK(cudaStreamCreateWithPriority(&d.lane, cudaStreamNonBlocking, greatest));
    for (cudaEvent_t* e : {&d.start, &d.done, &d.fork, &d.join}) SYMMEM_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    if (d.own_rs_all) {
      d.stored_words = static_cast<int>(std::max<int64_t>(1, max_m / comm.size() / 256)) * comm.size();
      // (and one word past them: HopperRowShards::finished)
      SYMMEM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d.stored), sizeof(unsigned long long) * (d.stored_words + 1)));
      SYMMEM_CUDA_CHECK(cudaMemset(d.stored, 0, sizeof(unsigned long long) * (d.stored_words + 1)));
      d.pushers.resize(comm.size() - 1, nullptr);
      d.pushed.resize(comm.size() - 1, nullptr);
      for (cudaStream_t& st : d.pushers) SYMMEM_CUDA_CHECK(cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, greatest));
      for (cudaEvent_t& e : d.pushed) SYMMEM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
  } catch (...) {
    release(d, comm);  // (no destructor runs for a constructor that throws)
    throw;
  }
}

void TensorParallel::release(Impl& d, Communicator& comm) {
  cudaDeviceSynchronize();
  for (cudaEvent_t e : {d.start, d.done, d.fork, d.join})
    if (e) cudaEventDestroy(e);
  if (d.side) cudaStreamDestroy(d.side);
  if (d.lane) cudaStreamDestroy(d.lane);
  if (d.staging) cudaFree(d.staging);
  if (d.stored) cudaFree(d.stored);
  for (cudaStream_t st : d.pushers)
    if (st) cudaStreamDestroy(st);
  for (cudaEvent_t e : d.pushed)
    if (e) cudaEventDestroy(e);
  try {
    if (d.gathered.valid()) comm.free(d.gathered);
    if (d.recv.valid()) comm.free(d.recv);
  } catch (...) {
  }
}

TensorParallel::~TensorParallel() {
  symmem::detail::DeviceGuard device(comm_.context().device(), std::nothrow);
  if (impl_) release(*impl_, comm_);
}

// (detail::choose_form and the rules it applies, and form_name: forms.cpp.)

Mode TensorParallel::choose(Op op, int64_t m, int64_t k, int64_t n) const { return detail::choose_mode(op, m, k, n, comm_.size()); }

Form TensorParallel::form(Op op, int64_t m, int64_t k, int64_t n, Mode mode, DataType dtype) const {
  const Impl& d = *impl_;
  // The constructor agreed on the knobs and on own_rs_all across ranks; own_gemm_ok is this rank's
  // (all_gather_matmul's own form is rank-local: both forms move and signal the rows alike).
  detail::FormFacts f;
  f.nranks = comm_.size();
  f.own_ok = op == Op::kAllGatherMatmul ? d.own_gemm_ok : d.own_rs_all;
  f.own_gemm = d.own_gemm;
  f.force_rs = d.force_rs;
  f.own_rs = d.own_rs;
  f.own_t = d.own_t;
  f.rs_t = d.rs_t;
  f.sms = comm_.shares_gpu() ? own_options(d.defer, true, d.sms).max_ctas : d.sms;  // (the SMs the own GEMM may hold)
  return detail::choose_form(op, mode, m, k, n, dtype, f);
}

static void check_shapes(const char* op, int64_t m, int64_t k, int64_t n, int nranks, int64_t max_m, int64_t max_k, int64_t max_n) {
  require(m > 0 && k > 0 && n > 0, "overlap::", op, ": M, K and Nc must be positive");
  require(m % nranks == 0, "overlap::", op, ": M=", m, " is not a multiple of the ", nranks, " ranks; pad M or split it unevenly yourself");
  require(k % 8 == 0 && n % 8 == 0, "overlap::", op, ": K=", k, " and Nc=", n, " must be multiples of 8 (rows of 16-byte multiples)");
  require(m <= max_m && k <= max_k && n <= max_n, "overlap::", op, ": M, K, Nc = ", m, ", ", k, ", ", n,
          " exceed the sizes this TensorParallel was made for (", max_m, ", ", max_k, ", ", max_n, ")");
}
// Every operand non-null (an optional one may be null) and 16-byte aligned.
struct Operand {
  const char* name;
  const void* ptr;
  bool optional;
};
static void check_ptrs(const char* op, std::initializer_list<Operand> operands) {
  for (const Operand& o : operands) {
    if (o.optional && o.ptr == nullptr) continue;
    require(o.ptr != nullptr, "overlap::", op, ": ", o.name, " is null");
    require((reinterpret_cast<uintptr_t>(o.ptr) & 15u) == 0, "overlap::", op, ": ", o.name, " must be 16-byte aligned");
  }
}

// SYMMEM_DEBUG_CHECKS=1: the arguments every rank must pass alike (M, K, Nc, mode and `more`),
// and each rank's checks of its own, agreed before anything runs (detail::checked_alike).
// The fields every rank must pass alike, under SYMMEM_DEBUG_CHECKS=1; `call` first, so that ranks
// that make different calls at one point (an all_gather_matmul beside a matmul_reduce_scatter) are
// told so by name, not by the fields that follow from it.
static std::string alike(const char* call, int64_t m, int64_t k, int64_t n, Mode mode, DataType dtype, const std::string& more = "") {
  return std::string("call=") + call + " m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n) + " mode=" + std::to_string(static_cast<int>(mode)) +
         " dtype=" + dtype_name(dtype) + more;
}
static void check_dtype(const char* op, DataType dtype) {
  require(dtype == DataType::kBFloat16 || dtype == DataType::kFloat16, "overlap::", op, ": dtype ", dtype_name(dtype),
          " is not supported; use kBFloat16 or kFloat16");
}

// SYMMEM_DEBUG=TRACE: the form an operation takes, on each rank (tests and measurements read it).
static void trace_form(const char* op, int64_t m, int64_t k, int64_t n, const char* form) {
  SYMMEM_LOG(kTrace, std::string("overlap::") + op + " m " + std::to_string(m) + " k " + std::to_string(k) + " n " + std::to_string(n) + ": " + form);
}

void TensorParallel::all_gather_matmul(const void* a_shard, int64_t m, int64_t k, const void* b, int64_t n, void* c, void* a_out,
                                       cudaStream_t s, Mode mode, DataType dtype) {
  symmem::detail::CallScope call("symmem all_gather_matmul", comm_.context().device());
  Impl& d = *impl_;
  const int N = comm_.size(), me = comm_.rank();
  symmem::detail::checked_alike(comm_, "overlap::all_gather_matmul", [&] { return alike("all_gather_matmul", m, k, n, mode, dtype); }, [&] {
    check_dtype("all_gather_matmul", dtype);
    check_shapes("all_gather_matmul", m, k, n, N, d.max_m, d.max_k, d.max_n);
    check_ptrs("all_gather_matmul", {{"a_shard", a_shard, false}, {"b", b, false}, {"c", c, false}, {"a_out", a_out, true}});
  });
  const int64_t rows = m / N;
  const size_t shard_bytes = static_cast<size_t>(rows) * k * 2;
  char* gathered = d.gathered.as<char>();
  const Form form = this->form(Op::kAllGatherMatmul, m, k, n, mode, dtype);
  trace_form("all_gather_matmul", m, k, n, form_name(form));
  if (form == Form::kSequential) {
    comm_.all_gather(a_shard, gathered, static_cast<size_t>(rows) * k, dtype, s);
    d.gemm.run(m, n, k, gathered, k, b, n, c, n, s, dtype);
  } else {
    stream::barrier(d.gathered, s);  // every peer is done with the previous call's rows and signals
    SYMMEM_CUDA_CHECK(cudaEventRecord(d.start, s));
    SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(d.side, d.start, 0));
    // Side stream: this rank's shard to every peer (nearest first), and to its own gathered copy
    // where a_out wants the gathered A. (Copies after the first two at a time, on two streams, were
    // measured no faster: 4 x H200, within +-2% either way, session 20.)
    for (int j = 1; j < N; ++j) {
      const int p = (me + j) % N;
      stream::put_signal(d.gathered, p, static_cast<size_t>(me) * shard_bytes, a_shard, shard_bytes, me, 1, SignalOp::kSet, d.side,
                         Engine::kCopyEngine);
    }
    if (a_out)
      SYMMEM_CUDA_CHECK(cudaMemcpyAsync(gathered + static_cast<size_t>(me) * shard_bytes, a_shard, shard_bytes, cudaMemcpyDeviceToDevice, d.side));
    SYMMEM_CUDA_CHECK(cudaEventRecord(d.done, d.side));
    if (form == Form::kOwnGather || form == Form::kOwnGatherT) {
      // One GEMM over all rows, local shard first, then the peers' in the order they land; each
      // tile's producer waits for its shard's signal (bounded) before loading its rows.
      HopperRowShards sh;
      sh.rows = static_cast<int>(rows);
      sh.count = N;
      sh.first = me;
      sh.wait = 1;
      sh.target = 1;
      sh.handle = d.gathered.handle();
      sh.quiet_ns = d.quiet_ns;
      sh.local = a_shard;
      sh.local_ld = k;
      HopperGemmOptions opt = own_options(d.defer, comm_.shares_gpu(), d.sms);
      opt.t_tall = d.t_tall;
      if (d.ag_raster > 0) opt.group_m = d.ag_raster;
      if (form == Form::kOwnGatherT)
        hopper_gemm_t(m, n, k, gathered, k, b, n, c, n, opt, s, &sh);
      else
        hopper_gemm(m, n, k, gathered, k, b, n, c, n, opt, s, &sh);
    } else {
      gather_gemms(a_shard, m, k, b, n, c, s, dtype);
    }
    SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(s, d.done, 0));
    SYMMEM_CUDA_CHECK(cudaMemsetAsync(d.gathered.signal_pad(), 0, sizeof(uint64_t) * N, s));
  }
  if (a_out) SYMMEM_CUDA_CHECK(cudaMemcpyAsync(a_out, gathered, static_cast<size_t>(m) * k * 2, cudaMemcpyDeviceToDevice, s));
}

// all_gather_matmul's cuBLASLt form, after the copies are queued. Lane: the peers' rows as their
// signals arrive (peer me - j sends to this rank j-th), a few shards a GEMM
// (detail::gather_groups). Caller's stream: the local rows, from the start, in what the lane
// leaves idle; joined back into it at the end.
void TensorParallel::gather_gemms(const void* a_shard, int64_t m, int64_t k, const void* b, int64_t n, void* c, cudaStream_t s,
                                  DataType dtype) {
  Impl& d = *impl_;
  const int N = comm_.size(), me = comm_.rank();
  const int64_t rows = m / N;
  char* gathered = d.gathered.as<char>();
  char* cc = static_cast<char*>(c);
  d.fork_lane(s);
  // The rows of shards [first, first + count) of the ring (it may wrap past rank N-1 to 0).
  auto gemm_shards = [&](int first, int count) {
    auto at = [&](int p, char* base, int64_t width) { return base + static_cast<size_t>(p) * rows * width * 2; };
    const int tail = first + count - N;  // shards past the wrap
    if (tail <= 0) {
      d.gemm2.run(rows * count, n, k, at(first, gathered, k), k, b, n, at(first, cc, n), n, d.lane, dtype);
    } else if (tail == N - first) {  // two equal runs, [0, tail) and [first, N): one batched GEMM
      d.gemm2.run_batched(rows * tail, n, k, gathered, k, static_cast<int64_t>(first) * rows * k, b, n, cc, n,
                          static_cast<int64_t>(first) * rows * n, 2, d.lane, dtype);
    } else {
      d.gemm2.run(rows * (N - first), n, k, at(first, gathered, k), k, b, n, at(first, cc, n), n, d.lane, dtype);
      d.gemm2.run(rows * tail, n, k, gathered, k, b, n, cc, n, d.lane, dtype);
    }
  };
  int step = 1;
  // SYMMEM_OVERLAP_GROUPS=0 / 1: one GEMM per peer's shard / the groups' model at any size (for
  // comparisons and tests; a rank-local choice). Otherwise detail::gather_groups.
  for (int g : d.force_groups == 0 ? std::vector<int>(N - 1, 1) : detail::gather_groups(N, n, rows, d.force_groups == 1)) {
    for (int j = step; j < step + g; ++j) stream::wait(d.gathered, (me - j + N) % N, Cmp::kGe, 1, d.lane);
    gemm_shards((me - (step + g - 1) + N) % N, g);  // steps step..step+g-1: shards me-step-g+1 .. me-step
    step += g;
  }
  d.gemm.run(rows, n, k, a_shard, k, b, n, cc + static_cast<size_t>(me) * rows * n * 2, n, s, dtype);
  d.join_lane(s);
}

void TensorParallel::matmul_reduce_scatter(const void* a, int64_t m, int64_t k, const void* b, int64_t n, void* c_shard, ReduceOp op,
                                           cudaStream_t s, Mode mode, DataType dtype) {
  symmem::detail::CallScope call("symmem matmul_reduce_scatter", comm_.context().device());
  Impl& d = *impl_;
  const int N = comm_.size(), me = comm_.rank();
  symmem::detail::checked_alike(comm_, "overlap::matmul_reduce_scatter",
                                [&] { return alike("matmul_reduce_scatter", m, k, n, mode, dtype, " op=" + std::to_string(static_cast<int>(op))); }, [&] {
    check_dtype("matmul_reduce_scatter", dtype);
    check_shapes("matmul_reduce_scatter", m, k, n, N, d.max_m, d.max_k, d.max_n);
    check_ptrs("matmul_reduce_scatter", {{"a", a, false}, {"b", b, false}, {"c_shard", c_shard, false}});
    require(op == ReduceOp::kSum || op == ReduceOp::kAvg, "overlap::matmul_reduce_scatter: op must be sum or avg");
  });
  const int64_t rows = m / N;
  const size_t slot = static_cast<size_t>(rows) * n;  // elements
  const char* aa = static_cast<const char*>(a);
  char* recv = d.recv.as<char>();
  const Form form = this->form(Op::kMatmulReduceScatter, m, k, n, mode, dtype);
  trace_form("matmul_reduce_scatter", m, k, n, form_name(form));
  if (form == Form::kSequential) {
    d.gemm.run(m, n, k, a, k, b, n, recv, n, s, dtype);
    comm_.reduce_scatter(recv, c_shard, slot, dtype, op, s);
    launch_end_recv_call(d.recv.handle(), 0, s);  // (a fused call after this one waits for it: credits.cuh)
    return;
  }
  // Every peer is done with the previous call's landing slots and signals: a barrier, or for the
  // fused forms the credits that the GEMM's counts wait for (credits.cuh), so that no rank's GEMM
  // waits at the start for the slowest rank's previous call.
  if ((form != Form::kFused && form != Form::kFusedT) || d.rs_barrier) stream::barrier(d.recv, s);
  const float scale = op == ReduceOp::kAvg ? 1.0f / N : 1.0f;
  // The fused form where every rank can run it and detail::reduce_own_gemm (or SYMMEM_OVERLAP_GEMM,
  // which the constructor checked is alike on every rank) says so; bf16 only (the dtype is alike on
  // every rank too: a call's arguments are). Else the ring (detail::rs_ring) or the sum form.
  if (form == Form::kFused || form == Form::kFusedT || form == Form::kOwnRing) {
    rs_fused(a, m, k, b, n, c_shard, scale, s, form == Form::kOwnRing, form == Form::kFusedT);
    return;
  }
  if (form == Form::kSum) {
    // Peers' rows first (ring order), each GEMM into local staging; the copy engine carries it to
    // that peer's slot `me` and signals (on the side stream) while the next GEMM runs. The local
    // rows last, then the N slots are summed by one kernel (fp32).
    char* staging = static_cast<char*>(d.staging);
    for (int j = 1; j < N; ++j) {
      const int p = (me + j) % N;
      char* st = staging + static_cast<size_t>(j - 1) * slot * 2;
      d.gemm.run(rows, n, k, aa + static_cast<size_t>(p) * rows * k * 2, k, b, n, st, n, s, dtype);
      SYMMEM_CUDA_CHECK(cudaEventRecord(d.start, s));
      SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(d.side, d.start, 0));
      stream::put_signal(d.recv, p, static_cast<size_t>(me) * slot * 2, st, slot * 2, me, 1, SignalOp::kSet, d.side, Engine::kCopyEngine);
    }
    d.gemm.run(rows, n, k, aa + static_cast<size_t>(me) * rows * k * 2, k, b, n, recv + static_cast<size_t>(me) * slot * 2, n, s, dtype);
    SYMMEM_CUDA_CHECK(cudaEventRecord(d.done, d.side));
    SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(s, d.done, 0));  // the staging is free again when the call ends
    for (int j = 1; j < N; ++j) stream::wait(d.recv, (me + j) % N, Cmp::kGe, 1, s);
    launch_sum_slots(recv, slot, N, c_shard, scale, d.sms, s, dtype);
    launch_end_recv_call(d.recv.handle(), N, s);
    return;
  }
  // A ring with the sum in the GEMMs' epilogues (no sum kernel). Step t (0 .. N-1) multiplies the
  // rows of block (me + t + 1) mod N, so the last step's block is this rank's own. From step 1 on,
  // each GEMM adds, in its epilogue, the partial that rank me + 1 computed for the same block at
  // step t - 1 (beta = 1: D = A x B + partial, in fp32 before the one rounding to the dtype); steps
  // before the last write into local staging, and the copy engine carries the result to rank
  // me - 1's landing slot t with a signal, while this rank's next GEMM runs. So block me leaves the
  // ring at step N-1 on rank me, holding every rank's rows of it. Each step goes in `chunks` parts
  // of its rows, a signal each, so that a part's copy runs under the next part's GEMM: rank me's
  // part c of step t waits for rank me + 1's part c of step t - 1, which ranks in step with this
  // one finished (chunks - 1) parts earlier; its copy (a part's bytes over the link) is hidden
  // where it takes at most that long (detail::rs_chunks). The sum of a block is rounded to the dtype
  // once a step (N - 1 times), against once in the sum form, whose kernel reads and writes N + 1 x
  // the shard after the last GEMM (~25 us at 8B, M 8192, 4 ranks); avg scales the last step's both
  // terms. (A GEMM storing straight into the peer over NVLink was measured slower: its
  // epilogue stalls on the remote stores.)
  // The waits are kernels in the GEMMs' stream. (Waits run ahead on a stream of their own, the
  // GEMMs held by events, measured 1-3% slower at 2 ranks, 8B M 16384 and 70B M >= 8192 on
  // 2 x H200, two passes, session 20: a wait kernel spinning beside the GEMMs likely holds an SM
  // slot that a persistent GEMM's block then lacks.)
  // Deadlock-free for any N: part c of step t waits only for part c of step t - 1 on rank me + 1,
  // whose copy waits only for that GEMM; step 0 waits for nothing, so by induction over t every
  // wait is met. Slots: landing slot t of rank me - 1 and signal t * chunks + c are written only by
  // this rank, once a call (the argument at the top of this file covers their reuse across calls).
  const int chunks = detail::rs_chunks(rows, k, d.rs_chunks);
  const int prev = (me + N - 1) % N;
  char* staging = static_cast<char*>(d.staging);
  char* out = static_cast<char*>(c_shard);
  for (int t = 0; t < N; ++t) {
    const int blk = (me + t + 1) % N;
    const bool last = t == N - 1;  // blk == me
    for (int c = 0; c < chunks; ++c) {
      const int64_t r0 = rows * c / chunks, hr = rows * (c + 1) / chunks - r0;  // the part's rows
      const size_t at = static_cast<size_t>(r0) * n * 2;                        // its bytes into a slot
      const char* a_rows = aa + (static_cast<size_t>(blk) * rows + r0) * k * 2;
      char* dst = last ? out + at : staging + static_cast<size_t>(t) * slot * 2 + at;
      if (t == 0) {
        d.gemm.run(hr, n, k, a_rows, k, b, n, dst, n, s, dtype);
      } else {
        stream::wait(d.recv, (t - 1) * chunks + c, Cmp::kGe, 1, s);
        d.gemm.run_acc(hr, n, k, a_rows, k, b, n, recv + static_cast<size_t>(t - 1) * slot * 2 + at, last ? scale : 1.0f,
                       last ? scale : 1.0f, dst, n, s, dtype);
      }
      if (!last) {
        SYMMEM_CUDA_CHECK(cudaEventRecord(d.start, s));
        SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(d.side, d.start, 0));
        stream::put_signal(d.recv, prev, static_cast<size_t>(t) * slot * 2 + at, dst, static_cast<size_t>(hr) * n * 2, t * chunks + c, 1,
                           SignalOp::kSet, d.side, Engine::kCopyEngine);
      }
    }
  }
  SYMMEM_CUDA_CHECK(cudaEventRecord(d.done, d.side));
  SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(s, d.done, 0));  // the staging is free again when the call ends
  launch_end_recv_call(d.recv.handle(), (N - 1) * chunks, s);
}

// matmul_reduce_scatter's fused form: one persistent GEMM of symmem's own over all rows (with no
// barrier before it: its counts wait for the peers' credits, credits.cuh), the peers' blocks first
// (me - 1, me - 2, ...: HopperRowShards runs shard `first` first, then first - 1, ...) into local
// staging, then this rank's own block, whose tiles add the
// peers' landed partials of their rows in fp32 before the one rounding to bf16 and store the sum
// into c_shard: no sum kernel after the GEMM. Each peer block goes in row groups
// (detail::rs_groups): the GEMM counts a group's stored half tiles (HopperRowShards::done), and on
// its own stream the copy engine's push of that group to peer p's slot `me` waits for the count
// (cuStreamWaitValue64) and then sets p's signal slot `me` to g + 1. The own block's tiles of row
// group g wait (in the GEMM's producer, bounded) for every peer's slot to reach g + 1.
// Why nothing waits forever, for any N and any interleaving: only own tiles wait, for the peers'
// pushes of the same row group, and only after their own k-loop (hopper_gemm.cu's producer loads a
// tile's k-blocks first, then waits for its partials); peer tiles wait for nothing, and a CTA
// stores and counts a peer tile during or right after the next tile's k-loop (its first k-blocks
// carry the deferred stores), which never waits. In every
// rank's order every own tile comes after every peer tile (schedule::tile_rows runs the own block
// last), so every CTA reaches and counts all its peer tiles, every rank's pushes (each waiting only
// for its own rank's counts) land, and every own tile's wait ends. The host model
// (tests/host/test_hopper_schedule.cpp) runs this order at 2-8 ranks and random interleavings to
// completion. The signals are set once a call, per (peer, group) in increasing g on that peer's
// one stream, so slot p >= g + 1 means groups 0..g of p have landed. No push waits past the
// GEMM's end: every tile is stored and counted even where a bounded wait timed out (its tile then
// computes on what is there), and the GEMM's last CTA to end sets every count past any target
// (HopperRowShards::finished; it replaced the stream's writes of each count after the GEMM, which
// cost 2.7 us each, 44 us at 8B M 16384's 16 row groups on 2 x H200, session 59). Reuse across
// calls: the credits (credits.cuh: a push of this call waits, through the count it waits for, until
// its peer has ended every earlier call that used recv; the GEMM's last CTA ends this one, its
// signals zeroed), and the counts are local and zeroed at the end of the call, after the pushers
// have joined. Every rank takes this form or none (own_rs_all), since its signals count row groups.
//
// The epilogue ring (`ring`, Form::kOwnRing) is the same GEMM, order, counts and streams with other
// destinations: block p (run j-th, p = me - j) adds, after its tiles' k-loops, the partial of block
// p that rank me - 1 computed at its step j - 1 (landed in this rank's slot p, signal slot p
// reaching g + 1 for row group g), except the first block (me - 1, step 0), which adds nothing;
// every block but the own one is counted, and its push goes to rank me + 1's slot p with its
// signal slot p (where it is that rank's step j + 1: its block (me + 1) - (j + 1) = p). The own
// block, last, stores scale x the sum into c_shard, which then holds every rank's rows of it.
// Why nothing waits forever, for any N and any interleaving, by induction on the step t: a tile
// of step t waits (after its k-loop) only for rank me - 1's push of step t - 1, same row group,
// and that push waits only for rank me - 1's counts of those tiles. Step 0's tiles wait for
// nothing. Suppose every rank completes (stores and counts) every tile of steps < t. A CTA's tiles
// run in step order, and a tile is stored and counted during or right after its CTA's next
// tile's k-loop, which never waits; so with step t - 1 complete everywhere, every push of step
// t - 1 (on its own stream, waiting only for its own counts) lands, and every wait of a step-t
// tile ends, so step t completes. (The pushes must run while the GEMM holds the SMs: copy-engine
// copies and stream writes need none; own_options says what happens where ranks share a GPU.)
// The slots: slot p of rank me + 1 and its signal are written only by this rank, once a call, as
// in the fused form. The ring keeps the call's barrier (its pushes go to slots other than `me`,
// which credits.cuh's argument for a sequential call before it does not cover); its counts pass
// the credit gate at once, and its last CTA ends the recv call like the fused form's. The host
// model runs this order too (HopperSchedule.EpilogueRingCompletesForAnyClusterCounts).
void TensorParallel::rs_fused(const void* a, int64_t m, int64_t k, const void* b, int64_t n, void* c_shard, float scale, cudaStream_t s,
                              bool ring, bool transposed) {
  Impl& d = *impl_;
  const int N = comm_.size(), me = comm_.rank();
  const int64_t rows = m / N;
  const size_t slot = static_cast<size_t>(rows) * n;  // elements
  const int groups = detail::rs_groups(rows);
  const int64_t grows = rows / groups;
  const size_t gbytes = static_cast<size_t>(grows) * n * 2;
  const uint64_t per_group = hopper_shard_halves(grows, n);
  require(N * groups <= d.stored_words, "overlap::matmul_reduce_scatter: internal: ", N * groups, " row-group counters needed, ", d.stored_words,
          " allocated");
  char* staging = static_cast<char*>(d.staging);
  char* recv = d.recv.as<char>();
  // (The GEMM is queued before the pushers' waits: a launch that throws leaves nothing waiting on
  // counts that would never come.)
  SYMMEM_CUDA_CHECK(cudaEventRecord(d.start, s));
  HopperRowShards sh;
  sh.rows = static_cast<int>(rows);
  sh.count = N;
  sh.first = (me + N - 1) % N;
  sh.done = d.stored;
  sh.finished = d.stored + d.stored_words;  // (the word past the counts)
  sh.groups = groups;
  sh.sum_shard = me;
  sh.partials = recv;
  sh.out = c_shard;
  sh.scale = scale;
  sh.ring = ring;
  sh.handle = d.recv.handle();
  sh.quiet_ns = d.quiet_ns;
  sh.credits = true;
  sh.sum_in_ring = transposed && d.sum_ring;
  HopperGemmOptions opt = own_options(d.defer, comm_.shares_gpu(), d.sms);
  opt.t_tall = d.t_tall;
  // The raster, row units at a time: the transposed form's by C's width; hopper_gemm's fused and
  // ring forms stay at kReduceGroup (the raster they ran at while clipped to a row group's units)
  // unless SYMMEM_OVERLAP_RS_RASTER says otherwise.
  opt.group_m = d.rs_raster > 0 ? d.rs_raster : transposed ? detail::reduce_raster(n) : detail::kReduceGroup;
  if (d.count_at >= 0) opt.count_at = d.count_at;
  // (Form::kFusedT: the transposed GEMM, whose done words count its row tiles per row group they
  // overlap, so each group's target is its own; its tall tiles fixed here, for the launch and the
  // targets alike.)
  if (transposed) {
    sh.straddle = hopper_t_straddle(m, n, opt, sh, d.straddle);
    opt.t_tall = hopper_t_tall(m, n, opt, &sh);
  }
  auto target = [&](int g, int p) { return transposed ? hopper_t_group_count(rows, grows, g, n, opt.t_tall, sh.straddle, p) : per_group; };
  if (transposed)
    hopper_gemm_t(m, n, k, a, k, b, n, staging, n, opt, s, &sh);
  else
    hopper_gemm(m, n, k, a, k, b, n, staging, n, opt, s, &sh);
  for (int j = 1; j < N; ++j) {
    const int p = (me - j + N) % N;  // the GEMM's order
    // Fused: block p to rank p's slot `me`; ring: block p (its sum so far) to rank me + 1's slot p.
    const int to = ring ? (me + 1) % N : p, into = ring ? p : me;
    cudaStream_t ps = d.pushers[j - 1];
    SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(ps, d.start, 0));
    for (int g = 0; g < groups; ++g) {
      const size_t at = static_cast<size_t>(p) * slot * 2 + static_cast<size_t>(g) * gbytes;
      SYMMEM_CU_CHECK(d.wait64(reinterpret_cast<CUstream>(ps), reinterpret_cast<CUdeviceptr>(d.stored + p * groups + g), target(g, p),
                               CU_STREAM_WAIT_VALUE_GEQ));
      stream::put_signal(d.recv, to, static_cast<size_t>(into) * slot * 2 + static_cast<size_t>(g) * gbytes, staging + at, gbytes, into,
                         static_cast<uint64_t>(g) + 1, SignalOp::kSet, ps, Engine::kCopyEngine);
    }
  }
  for (int j = 1; j < N; ++j) {  // the staging is free again when the call ends
    SYMMEM_CUDA_CHECK(cudaEventRecord(d.pushed[j - 1], d.pushers[j - 1]));
    SYMMEM_CUDA_CHECK(cudaStreamWaitEvent(s, d.pushed[j - 1], 0));
  }
  // (The recv call's end, its signals zeroed, is the GEMM's last CTA's: HopperRowShards::credits.)
  SYMMEM_CUDA_CHECK(cudaMemsetAsync(d.stored, 0, sizeof(unsigned long long) * N * groups, s));
}

}  // namespace symmem::overlap
