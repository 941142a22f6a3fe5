// Communicator: argument checks, algorithm choice, and the launch of each collective.
//
// What ranks must agree on, and from what they decide it:
//   algorithm  the tuning table (op, dtype, team size, message size), then a fallback that looks at
//              the kind of buffers (symmetric, in place): the arguments of the call, which the
//              contract in collectives.hpp makes the same on every rank (SYMMEM_DEBUG_CHECKS=1
//              verifies them on every call). A rooted operation decides from the buffer every
//              rank passes: broadcast and scatter from `out`, reduce and gather from `in`.
//   grid       the message size and the smallest SM count of the team (agreed at construction).
//   workspace  the layout from CommOptions and the team size, the same everywhere.
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "../runtime/call_scope.hpp"
#include "../runtime/log.hpp"
#include "kernels.hpp"
#include "nccl_types.hpp"
#include "symmem/collectives.hpp"
#include "symmem/env.hpp"
#include "symmem/error.hpp"

namespace symmem {

namespace {
using detail::nccl_op;
using detail::nccl_type;
void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) fail<Error>(std::string(what) + " failed: " + ncclGetErrorString(r));
}
// The rooted operations' buffers that only the root passes: broadcast's and scatter's input,
// reduce's and gather's output (collectives.hpp says which algorithms need them everywhere).
bool root_only_in(CollOp op) { return op == CollOp::kBroadcast || op == CollOp::kScatter; }
bool root_only_out(CollOp op) { return op == CollOp::kReduce || op == CollOp::kGather; }
bool overlap(const void* a, size_t na, const void* b, size_t nb) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return na && nb && x < y + nb && y < x + na;
}
// The workspace's layout: LL slots carry ll_max_bytes per peer, push stages twice that. One
// definition for the allocation and every launch.
ws::Layout workspace_layout(int nranks, const CommOptions& opt) {
  return ws::Layout::make(nranks, opt.ll_max_bytes, 2 * opt.ll_max_bytes);
}
// The LL arguments of a message of `bytes` a peer (two-shot all-reduce: chunk > 0): its line
// format follows from the size and the layout (ws::ll_payload_for), the same on every rank.
// Reductions of 8-byte elements go in narrow lines whatever their size (detail::ll_narrow_only).
coll::LLArgs ll_args(const DeviceHandle& ws, const ws::Layout& L, const void* in, void* out, size_t bytes, int root, size_t chunk = 0,
                     bool narrow_only = false) {
  coll::LLArgs a{ws, L, static_cast<const char*>(in), static_cast<char*>(out), bytes, root};
  a.chunk = chunk;
  a.payload = narrow_only ? ws::kLLNarrow : chunk > 0 ? ws::kLLPayload : ws::ll_payload_for(bytes, L.ll_slot_lines);
  return a;
}
// The grid of an LL operation: detail::ll_grid (tuning.cpp, with the measurements behind it).
int ll_blocks(const coll::LLArgs& a, int sms, CollOp op) {
  const size_t lines = a.payload == ws::kLLNarrow ? ws::ll_lines<ws::kLLNarrow>(a.bytes) : ws::ll_lines(a.bytes);
  return detail::ll_grid(lines, a.ws.nranks, op, sms, coll::kThreads);
}
int push_blocks(size_t bytes) {
  return static_cast<int>(std::clamp<size_t>((bytes + 8191) / 8192, 1, ws::kMaxBlocks));
}
int direct_blocks(size_t bytes, int sms) {
  const size_t b = (bytes + coll::kThreads * 32 - 1) / (coll::kThreads * 32);
  return static_cast<int>(std::clamp<size_t>(b, 1, static_cast<size_t>(std::min(sms, coll::kMaxBlocks))));
}
}  // namespace

// ---- NCCL watchdog ----------------------------------------------------------------------------
// NCCL waits without a bound. Each NCCL call made outside graph capture records an event; a thread
// checks them, and one still unfinished past the context's wait bound fails the context's waits
// (so symmem kernels give up too) and aborts the NCCL communicator, which ends its kernels. Calls
// inside a captured graph are not watched (their replays are the graph's).
struct Communicator::Watchdog {
  struct Pending {
    cudaEvent_t ev;
    std::chrono::steady_clock::time_point start;
    std::string what;
  };
  Communicator* comm;
  int device;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> pending;
  std::vector<cudaEvent_t> free_events;
  bool stop = false;
  std::thread thread;

  Watchdog(Communicator* c, int dev) : comm(c), device(dev) { thread = std::thread([this] { run(); }); }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_all();
    thread.join();
    for (auto& p : pending) cudaEventDestroy(p.ev);
    for (auto e : free_events) cudaEventDestroy(e);
  }
  void watch(cudaStream_t s, const char* what) {
    cudaEvent_t ev;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (free_events.empty()) {
        SYMMEM_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
      } else {
        ev = free_events.back();
        free_events.pop_back();
      }
    }
    SYMMEM_CUDA_CHECK(cudaEventRecord(ev, s));
    std::lock_guard<std::mutex> lock(mu);
    pending.push_back({ev, std::chrono::steady_clock::now(), what});
  }
  void run() {
    cudaSetDevice(device);
    // Relaxed capture mode for this thread: its event queries must neither fail nor invalidate a
    // graph that another thread is capturing in global mode (torch.cuda.graph's default). In the
    // default mode one query during such a capture broke it: seen as "ncclAllReduce failed:
    // unhandled cuda error" from PyTorch at 4 GPUs, where a 16 MiB all-reduce goes to NCCL.
    cudaStreamCaptureMode relaxed = cudaStreamCaptureModeRelaxed;
    (void)cudaThreadExchangeStreamCaptureMode(&relaxed);
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      cv.wait_for(lock, std::chrono::milliseconds(50));
      while (!pending.empty() && cudaEventQuery(pending.front().ev) == cudaSuccess) {
        free_events.push_back(pending.front().ev);
        pending.pop_front();
      }
      (void)cudaGetLastError();
      if (pending.empty()) continue;
      const auto bound = std::chrono::milliseconds(comm->ctx_->settings().device_timeout_ms);
      const auto waited = std::chrono::steady_clock::now() - pending.front().start;
      if (waited < bound) continue;
      const std::string why = "NCCL " + pending.front().what + " on team '" + comm->team().name() + "' (rank " +
                              std::to_string(comm->ctx_->rank()) + ") did not finish within " +
                              std::to_string(comm->ctx_->settings().device_timeout_ms) +
                              " ms: a peer may have skipped the call, passed other arguments, or left; NCCL was aborted";
      SYMMEM_LOG(kWarn, why);
      comm->set_failed(why);
      comm->ctx_->fail_waits(why);
      ncclComm_t nc = comm->nccl_;
      if (nc != nullptr) ncclCommAbort(nc);
      comm->nccl_ = nullptr;
      for (auto& p : pending) free_events.push_back(p.ev);
      pending.clear();
    }
  }
};

// ---- construction -----------------------------------------------------------------------------
Communicator::Communicator(std::shared_ptr<Context> ctx, CommOptions opt) : ctx_(std::move(ctx)), opt_(std::move(opt)) {
  require(ctx_ != nullptr, "Communicator: context is null");
  init(ctx_->world());
}

Communicator::Communicator(std::shared_ptr<Context> ctx, Team team, CommOptions opt) : ctx_(std::move(ctx)), opt_(std::move(opt)) {
  require(ctx_ != nullptr, "Communicator: context is null");
  init(std::move(team));
}

void Communicator::init(Team team) {
  detail::DeviceGuard device(ctx_->device());  // its workspace, NCCL communicator and events are this GPU's
  require(team.valid(), "Communicator: the team is invalid (a negative split color?)");
  // The options and the tuning table, agreed before the heap is made: a rank that refuses its own
  // (a bad ll_max_bytes, a table file it cannot read) says so to every rank, which all raise it,
  // instead of throwing alone and leaving the others in the heap's exchanges until the bound; and
  // every rank must choose from the same table and the same LL limit (SYMMEM_TUNING_FILE or the
  // options could differ between ranks).
  std::string why;
  if (opt_.ll_max_bytes < 4096 || opt_.ll_max_bytes % 8 != 0)
    why = "CommOptions::ll_max_bytes=" + std::to_string(opt_.ll_max_bytes) + " must be a multiple of 8, at least 4096";
  const std::string table = !opt_.tuning_file.empty() ? opt_.tuning_file : ctx_->settings().tuning_file;
  try {
    table_ = table.empty() ? TuningTable::defaults() : TuningTable::load(table);
  } catch (const std::exception& e) {
    detail::add_reason(why, e.what());
  }
  // Facts every rank must share, carried by the same exchange: the smallest SM count (grids), and
  // which GPUs the ranks are on.
  int sms = 0;
  char bus[32] = {0};
  try {
    SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx_->device()));
    SYMMEM_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), ctx_->device()));
  } catch (const std::exception& e) {
    detail::add_reason(why, e.what());
  }
  const std::string mine = "ll_max_bytes=" + std::to_string(opt_.ll_max_bytes) +
                           " table=" + std::to_string(std::hash<std::string>{}(table_.to_text()));
  const auto facts = team.require_same(mine, "Communicator's options and tuning table", why, std::to_string(sms) + " " + bus,
                                       "; this rank's table is " + (table.empty() ? std::string("the built-in one") : table) +
                                           ": give every rank the same CommOptions and SYMMEM_TUNING_FILE");
  heap_ = std::make_unique<Heap>(ctx_, std::move(team));
  ws_ = heap_->alloc(workspace_layout(size(), opt_).bytes());
  std::vector<std::string> buses;
  sms_ = sms;
  for (auto& f : facts) {
    const size_t sp = f.find(' ');
    sms_ = std::min(sms_, std::stoi(f.substr(0, sp)));
    buses.push_back(f.substr(sp + 1));
  }
  // NCCL over the same ranks: the fallback. Ranks that share a GPU (by PCI bus id, which holds
  // whatever CUDA_VISIBLE_DEVICES each rank has) cannot form one; then only symmem's own
  // algorithms run and asking for NCCL fails with that reason.
  std::sort(buses.begin(), buses.end());
  shares_gpu_ = std::adjacent_find(buses.begin(), buses.end()) != buses.end();
  // Ranks sharing a GPU where this process sees a GPU for each of them is almost always a device
  // left at its default (every rank on GPU 0: torch.cuda.set_device not called before
  // symmem.init), which runs without NCCL and many times slower: said once a process, on the
  // team's rank 0, whatever SYMMEM_DEBUG is, unless SYMMEM_RANKS_PER_GPU asks for sharing.
  static std::atomic<bool> told{false};  // (Communicators may be made on several threads at once)
  int visible = 0;
  if (shares_gpu_ && !told.load() && rank() == 0 && cudaGetDeviceCount(&visible) == cudaSuccess &&
      detail::sharing_unmeant(true, visible, size(), std::getenv("SYMMEM_RANKS_PER_GPU")) && !told.exchange(true)) {
    const auto gpus = std::unique(buses.begin(), buses.end()) - buses.begin();
    detail::log_line(detail::LogLevel::kWarn,
                     "the " + std::to_string(size()) + " ranks of team '" + heap_->team().name() + "' run on " + std::to_string(gpus) +
                         " GPU(s) though this process sees " + std::to_string(visible) +
                         ": give each rank its own (torch.cuda.set_device(LOCAL_RANK) before symmem.init(), or "
                         "Context::init's LOCAL_RANK); ranks that share a GPU run without NCCL and many times slower "
                         "(SYMMEM_RANKS_PER_GPU=K says the sharing is meant)");
  }
  if (!shares_gpu_) {
    ncclUniqueId id;
    if (rank() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    auto ids = heap_->team().all_gather(rank() == 0 ? std::string(reinterpret_cast<char*>(&id), sizeof(id)) : "", "NCCL id");
    std::memcpy(&id, ids[0].data(), sizeof(id));
    nccl_check(ncclCommInitRank(&nccl_, size(), id, rank()), "ncclCommInitRank");
    // NCCL connects peers on the first call that needs them, blocking the host until the peer
    // makes the same call. Connect now (one tiny all-reduce, one exchange with every peer), while
    // every rank is known to be here: later calls then block only on the GPU, where the watchdog
    // below bounds them.
    cudaStream_t s = nullptr;
    void* scratch = nullptr;
    SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    SYMMEM_CUDA_CHECK(cudaMalloc(&scratch, 2 * static_cast<size_t>(size()) + 16));
    nccl_check(ncclAllReduce(scratch, scratch, 1, ncclFloat32, ncclSum, nccl_, s), "ncclAllReduce (connect)");
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    char* b = static_cast<char*>(scratch) + 16;
    for (int q = 0; q < size(); ++q) {
      nccl_check(ncclSend(b + q, 1, ncclUint8, q, nccl_, s), "ncclSend (connect)");
      nccl_check(ncclRecv(b + size() + q, 1, ncclUint8, q, nccl_, s), "ncclRecv (connect)");
    }
    nccl_check(ncclGroupEnd(), "ncclGroupEnd (connect)");
    SYMMEM_CUDA_CHECK(cudaStreamSynchronize(s));
    SYMMEM_CUDA_CHECK(cudaFree(scratch));
    SYMMEM_CUDA_CHECK(cudaStreamDestroy(s));
    watchdog_ = std::make_unique<Watchdog>(this, ctx_->device());
  }
  SYMMEM_LOG(kInfo, "communicator on team '" + heap_->team().name() + "': rank " + std::to_string(rank()) + " of " +
                        std::to_string(size()) + ", " + std::to_string(sms_) + " SMs, NCCL " + (nccl_ ? "yes" : "no (ranks share a GPU)") +
                        ", tuning table " + (table.empty() ? std::string("built-in") : table) + " (" + std::to_string(table_.entries().size()) +
                        " entries), workspace " + std::to_string(ws_.bytes() >> 20) + " MiB");
}

Communicator::~Communicator() {
  detail::DeviceGuard device(ctx_->device(), std::nothrow);  // (a garbage collector's thread may run it)
  watchdog_.reset();
  if (!failure().empty()) {
    // A failed communicator's peers may be gone or stuck: release without talking to them.
    if (nccl_) ncclCommAbort(nccl_);
    nccl_ = nullptr;
    if (heap_) heap_->abandon();
    return;
  }
  if (ws_.valid()) {
    try {
      heap_->free(ws_);
    } catch (...) {
    }
  }
  if (nccl_) ncclCommDestroy(nccl_);
}

std::unique_ptr<Communicator> Communicator::split(int color, int key) const {
  usable("split");
  Team t = heap_->team().split(color, key);
  if (!t.valid()) return nullptr;
  return std::make_unique<Communicator>(ctx_, t, opt_);
}

int Communicator::rank() const { return heap_->team().rank(); }
int Communicator::size() const { return heap_->team().size(); }
const Team& Communicator::team() const { return heap_->team(); }

void Communicator::set_timeout_ms(int ms) { ctx_->set_device_timeout_ms(ms); }

std::string Communicator::failure() const {
  std::lock_guard<std::mutex> lock(fail_mu_);
  return failed_;
}

void Communicator::set_failed(const std::string& why) const {
  std::lock_guard<std::mutex> lock(fail_mu_);
  if (failed_.empty()) failed_ = why;
}

void Communicator::abort() {
  set_failed("aborted by Communicator::abort()");
  ctx_->fail_waits("aborted by Communicator::abort() on team '" + team().name() + "'");
  watchdog_.reset();
  if (nccl_) ncclCommAbort(nccl_);
  nccl_ = nullptr;
  ws_ = SymmetricBuffer();
  heap_->abandon();
}

void Communicator::usable(const char* op) const {
  const std::string failed = failure();
  if (!failed.empty())
    fail<Error>(std::string(op) + ": this communicator failed earlier (" + failed +
                "); its state is undefined: destroy it (or call abort()) and make a new one");
  try {
    ctx_->check(op);
  } catch (const Timeout& e) {
    set_failed(e.what());
    throw Timeout(std::string(e.what()) + "; this communicator is failed from now on: destroy it (or call abort()) and make a new one");
  }
}

namespace detail {
bool sharing_unmeant(bool shares, int visible, int ranks, const char* ranks_per_gpu) {
  return shares && visible >= ranks && (ranks_per_gpu == nullptr || *ranks_per_gpu == 0 || std::strcmp(ranks_per_gpu, "1") == 0);
}
}  // namespace detail

// ---- algorithm choice -------------------------------------------------------------------------
Algo Communicator::select(CollOp op, DataType dtype, size_t bytes, bool in_sym, bool out_sym, bool in_place) const {
  return detail::choose_algo(table_, op, dtype, size(), bytes, in_sym, out_sym, in_place, nccl_ != nullptr, opt_.ll_max_bytes);
}

struct Communicator::Prepared {
  Algo algo = Algo::kNccl;
  bool skip = false;      // count 0
  bool in_place = false;
  bool needs_in = true;   // `in` is passed on this rank (false for a non-root's broadcast or scatter but direct)
  bool needs_out = true;  // `out` is passed on this rank (false for a non-root's reduce or gather but push)
};

// The call's checks and the algorithm choice. Under SYMMEM_DEBUG_CHECKS=1 a refusal on any rank,
// or arguments that differ across ranks, are raised on every rank before anything is launched;
// without it each rank checks its own call and raises alone (no host exchange on the hot path).
Communicator::Prepared Communicator::prepare(CollOp op, Algo asked, DataType dtype, ReduceOp redop, int root, size_t count,
                                             const void* in, size_t in_bytes, const void* out, size_t out_bytes,
                                             size_t ll_bytes, const int64_t* send_counts, const int64_t* recv_counts) const {
  const char* n = coll_name(op);
  usable(n);
  if (!ctx_->settings().debug_checks)
    return prepare_local(op, asked, dtype, redop, root, count, in, in_bytes, out, out_bytes, ll_bytes, send_counts, recv_counts);
  Prepared p;
  std::string refusal;
  try {
    p = prepare_local(op, asked, dtype, redop, root, count, in, in_bytes, out, out_bytes, ll_bytes, send_counts, recv_counts);
  } catch (const InvalidArgument& e) {
    refusal = e.what();
  }
  std::string mine = "call=" + std::string(n);
  if (refusal.empty()) {
    // Everything ranks must agree on, including the kind and heap offset of each buffer.
    auto where = [&](const void* ptr, size_t bytes) -> std::string {
      if (ptr == nullptr) return "null";
      SymmetricBuffer b = heap_->find(ptr, bytes);
      if (!b.valid()) return "plain";
      return "symmetric+" + std::to_string(static_cast<const char*>(ptr) - static_cast<const char*>(b.ptr())) + "/" +
             std::to_string(b.bytes());
    };
    // Not compared: what may differ by rank. The root's buffer of a rooted operation where only
    // the root passes it (broadcast's and scatter's input outside direct, reduce's and gather's
    // output outside gather's push), in place the buffer at this rank's slot (all_gather's in,
    // reduce_scatter's out), and whether a rooted operation runs in place (only the root's can).
    const bool rooted = coll_rooted(op);
    const bool same_in = root_only_in(op) ? asked == Algo::kDirect : !(p.in_place && op == CollOp::kAllGather);
    // (all_to_all_v's outputs may differ in kind, place and size: each rank's header says where its own lies.)
    const bool same_out = root_only_out(op) ? op == CollOp::kGather && asked == Algo::kPush
                                            : !(p.in_place && op == CollOp::kReduceScatter) && op != CollOp::kAllToAllV;
    mine += " count=" + std::to_string(count) + " dtype=" + dtype_name(dtype) + (coll_reducing(op) ? std::string(" op=") + redop_name(redop) : "") +
            (rooted ? " root=" + std::to_string(root) : "") + " asked=" + algo_name(asked) + " algo=" + algo_name(p.algo) +
            (rooted ? std::string() : std::string(" in_place=") + (p.in_place ? "1" : "0")) +
            (same_out && p.needs_out ? " out=" + where(out, out_bytes) : "") + (same_in && p.needs_in ? " in=" + where(in, in_bytes) : "");
  }
  heap_->team().require_same(mine, n, refusal);
  return p;
}

Communicator::Prepared Communicator::prepare_local(CollOp op, Algo asked, DataType dtype, ReduceOp redop, int root, size_t count,
                                                   const void* in, size_t in_bytes, const void* out, size_t out_bytes,
                                                   size_t ll_bytes, const int64_t* send_counts, const int64_t* recv_counts) const {
  const char* n = coll_name(op);
  require(valid_dtype(dtype), n, ": dtype=", static_cast<int>(dtype), " is not a symmem::DataType");
  if (coll_reducing(op)) {
    require(static_cast<int>(redop) >= 0 && static_cast<int>(redop) <= static_cast<int>(ReduceOp::kAvg),
            n, ": op=", static_cast<int>(redop), " is not a symmem::ReduceOp");
  }
  require(static_cast<int>(asked) >= 0 && static_cast<int>(asked) <= static_cast<int>(Algo::kTwoShotPush),
          n, ": algo=", static_cast<int>(asked), " is not a symmem::Algo");
  require(count <= (size_t(1) << 50) / dtype_size(dtype), n, ": count=", count, " is too large");
  if (coll_rooted(op))
    require(root >= 0 && root < size(), n, ": root=", root, " is out of range [0, ", size(), ")");
  if (op == CollOp::kAllToAllV) {
    require(send_counts != nullptr, n, ": send_counts is null");
    require(in != nullptr, n, ": in is null");
    require(heap_->find(in).valid(), n, ": in must lie in a buffer from Communicator::alloc (peers read it directly)");
    require((reinterpret_cast<uintptr_t>(send_counts) & 7u) == 0, n, ": send_counts must be 8-byte aligned");
    require(recv_counts == nullptr || (reinterpret_cast<uintptr_t>(recv_counts) & 7u) == 0, n, ": recv_counts must be 8-byte aligned");
  }

  // Broadcast and scatter: only the root's input is read; direct (pull) also needs every rank to pass
  // the root's input's symmetric address, to find it on the root. Reduce and gather: only the
  // root's output is written; gather's push needs every rank to pass the root's output's address.
  const bool root_in = !root_only_in(op) || rank() == root, root_out = !root_only_out(op) || rank() == root;
  const bool needs_in = root_in || asked == Algo::kDirect;
  // (all_to_all_v: a rank whose out_count is 0 may pass no output; a count addressed to it is then
  // found on the GPU, "would receive".)
  const bool needs_out = (root_out || (op == CollOp::kGather && asked == Algo::kPush)) && !(op == CollOp::kAllToAllV && out_bytes == 0);
  Prepared p;
  p.needs_in = needs_in;
  p.needs_out = needs_out;
  p.skip = count == 0;
  bool in_sym = false, out_sym = false, in_place = false;
  if (!p.skip) {
    if (needs_out) require(out != nullptr, n, root_out ? ": out is null" : ": out is null (gather with algo=push: every rank passes the root's output address)");
    if (needs_in)
      require(in != nullptr, n, root_in ? ": in is null" : std::string(": in is null (direct ") + n + ": every rank passes the root's input address)");
    const size_t es = dtype_size(dtype);
    if (needs_out) require(reinterpret_cast<uintptr_t>(out) % es == 0, n, ": out is not aligned to its dtype (", es, " bytes)");
    if (in != nullptr && needs_in)
      require(reinterpret_cast<uintptr_t>(in) % es == 0, n, ": in is not aligned to its dtype (", es, " bytes)");
    // In place: the one form each operation allows (collectives.hpp); any other overlap is an error.
    // (A rooted operation's buffers meet only on the root.)
    if (in != nullptr && root_in && root_out && overlap(in, in_bytes, out, out_bytes)) {
      const char* o = static_cast<const char*>(out);
      const char* i = static_cast<const char*>(in);
      if (op == CollOp::kReduceScatter) {
        require(o == i + static_cast<size_t>(rank()) * out_bytes,
                n, ": in and out overlap; in place means out == in + rank * recv_count, else pass disjoint buffers");
      } else if (op == CollOp::kAllGather) {
        require(i == o + static_cast<size_t>(rank()) * in_bytes,
                n, ": in and out overlap; in place means in == out + rank * send_count, else pass disjoint buffers");
      } else if (op == CollOp::kAllReduce || op == CollOp::kBroadcast || op == CollOp::kReduce) {
        require(i == o, n, ": in and out overlap partially; pass in == out (in place) or disjoint buffers");
      } else if (op == CollOp::kGather) {
        require(i == o + static_cast<size_t>(root) * in_bytes,
                n, ": in and out overlap; in place means in == out + root * send_count on the root, else pass disjoint buffers");
      } else if (op == CollOp::kScatter) {
        require(o == i + static_cast<size_t>(root) * out_bytes,
                n, ": in and out overlap; in place means out == in + root * recv_count on the root, else pass disjoint buffers");
      } else {
        fail(std::string(n) + ": cannot run in place (in and out overlap); pass disjoint buffers");
      }
      in_place = true;
    }
    p.in_place = in_place;
    // A rooted operation decides from the buffer every rank passes: broadcast and scatter from
    // `out`, reduce and gather from `in`. (Its in-place form, the root's alone, does not count.)
    out_sym = needs_out && (!root_only_out(op) || asked != Algo::kAuto) && heap_->find(out, out_bytes).valid();
    in_sym = needs_in && (!root_only_in(op) || asked != Algo::kAuto) && in != nullptr && heap_->find(in, in_bytes).valid();
    if (root_only_in(op) && asked == Algo::kDirect)
      require(in_sym, n, " with algo=direct: in must come from Communicator::alloc (the root's input, at the same offset on every rank)");
    if (root_only_out(op) && asked == Algo::kPush)
      require(out_sym, n, " with algo=push: out must come from Communicator::alloc (the root's output, at the same offset on every rank)");
    const bool whole = coll_chunked(op);  // the size is every rank's chunk
    p.algo = asked == Algo::kAuto ? select(op, dtype, count * es * (whole ? size() : 1), in_sym, out_sym, coll_rooted(op) ? false : in_place)
                                  : asked;
    std::string why = op == CollOp::kAllToAllV ? (p.algo == Algo::kLL || p.algo == Algo::kDirect ? "" : "all_to_all_v has ll and direct")
                                               : detail::algo_unfit(op, p.algo, in_sym, out_sym, in_place, ll_bytes, opt_.ll_max_bytes, size(), dtype);
    if (why.empty() && p.algo == Algo::kNccl && nccl_ == nullptr) why = "no NCCL communicator (ranks share a GPU)";
    if (!why.empty()) fail(std::string(n) + " with algo=" + algo_name(p.algo) + ": " + why);
    if (op == CollOp::kAllToAllV && p.algo == Algo::kDirect)
      require(heap_->find(send_counts, sizeof(int64_t) * size()).valid(),
              n, " with algo=direct: send_counts must be an int64 array [nranks] in a buffer from Communicator::alloc");
    SYMMEM_LOG(kTrace, [&] {
      const size_t total = count * dtype_size(dtype) * (whole ? size() : 1);
      const Algo table_algo = table_.lookup(op, dtype, size(), total);
      std::string reason = asked != Algo::kAuto ? "asked" : table_algo == p.algo ? "the table's choice" : std::string("the table's ") + algo_name(table_algo) + " cannot run with these buffers";
      return std::string(n) + " count=" + std::to_string(count) + " " + dtype_name(dtype) + " bytes=" + std::to_string(total) +
             " in=" + (in_sym ? "symmetric" : "plain") + " out=" + (out_sym ? "symmetric" : "plain") + (in_place ? " in place" : "") +
             " -> " + algo_name(p.algo) + " (" + reason + ")";
    }());
  }
  return p;
}

// Arguments of the zero-copy kernels: the workspace (barriers), and the heap buffers that hold the
// input (peers read it) or the output (peers write it), as the algorithm needs.
coll::DirectArgs Communicator::direct_args(const void* in, size_t in_bytes, bool need_in, void* out, size_t out_bytes,
                                           bool need_out, size_t bytes) const {
  coll::DirectArgs args{};
  args.ws = ws_.handle();
  if (need_in) args.in_h = heap_->find(in, in_bytes).handle();
  if (need_out) args.out_h = heap_->find(out, out_bytes).handle();
  args.in = static_cast<const char*>(in);
  args.out = static_cast<char*>(out);
  args.bytes = bytes;
  return args;
}

void Communicator::nccl_started(cudaStream_t s, const char* what) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &st) != cudaSuccess) (void)cudaGetLastError();
  if (st == cudaStreamCaptureStatusNone && watchdog_) watchdog_->watch(s, what);
}

// ---- the collectives --------------------------------------------------------------------------
// Bytes of `count` elements of `d` per rank, times `ranks`: checked, so that no size wraps before
// prepare() validates the call (an invalid dtype counts as 1 byte; prepare rejects it).
static size_t bytes_of(size_t count, DataType d, size_t ranks, const char* op) {
  const size_t es = valid_dtype(d) ? dtype_size(d) : 1;
  return detail::checked_mul(detail::checked_mul(count, es, op), ranks, op);
}

void Communicator::all_reduce(const void* in, void* out, size_t count, DataType dtype, ReduceOp op, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem all_reduce", ctx_->device());
  const size_t bytes = bytes_of(count, dtype, 1, "all_reduce");
  Prepared p = prepare(CollOp::kAllReduce, algo, dtype, op, 0, count, in, bytes, out, bytes, bytes);
  if (p.skip) return;
  const ws::Layout L = workspace_layout(size(), opt_);
  if (p.algo == Algo::kNccl) {
    nccl_check(ncclAllReduce(in, out, count, nccl_type(dtype), nccl_op(op), nccl_, s), "ncclAllReduce");
    nccl_started(s, "all_reduce");
  } else if (p.algo == Algo::kLL) {
    const coll::LLArgs args = ll_args(ws_.handle(), L, in, out, bytes, 0, detail::ll_two_shot_chunk(bytes, size(), L.ll_slot_lines, dtype),
                                      detail::ll_narrow_only(CollOp::kAllReduce, dtype));
    coll::launch_ll(CollOp::kAllReduce, args, dtype, op, ll_blocks(args, sms_, CollOp::kAllReduce), s);
  } else if (p.algo == Algo::kPush) {
    coll::PushArgs args{ws_.handle(), L, static_cast<const char*>(in), static_cast<char*>(out), bytes};
    coll::launch_push(CollOp::kAllReduce, args, dtype, op, push_blocks(bytes), s);
  } else {
    coll::DirectArgs args = direct_args(in, bytes, p.algo != Algo::kTwoShotPush, out, bytes,
                                        p.algo == Algo::kTwoShot || p.algo == Algo::kTwoShotPush, bytes);
    coll::launch_all_reduce(p.algo, args, dtype, op, direct_blocks(bytes, sms_), s);
  }
}

void Communicator::reduce_scatter(const void* in, void* out, size_t recv_count, DataType dtype, ReduceOp op, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem reduce_scatter", ctx_->device());
  const size_t chunk = bytes_of(recv_count, dtype, 1, "reduce_scatter"), total = bytes_of(recv_count, dtype, size(), "reduce_scatter");
  Prepared p = prepare(CollOp::kReduceScatter, algo, dtype, op, 0, recv_count, in, total, out, chunk, chunk);
  if (p.skip) return;
  const ws::Layout L = workspace_layout(size(), opt_);
  if (p.algo == Algo::kNccl) {
    nccl_check(ncclReduceScatter(in, out, recv_count, nccl_type(dtype), nccl_op(op), nccl_, s), "ncclReduceScatter");
    nccl_started(s, "reduce_scatter");
  } else if (p.algo == Algo::kLL) {
    const coll::LLArgs args = ll_args(ws_.handle(), L, in, out, chunk, 0, 0, detail::ll_narrow_only(CollOp::kReduceScatter, dtype));
    coll::launch_ll(CollOp::kReduceScatter, args, dtype, op, ll_blocks(args, sms_, CollOp::kReduceScatter), s);
  } else if (p.algo == Algo::kPush) {
    coll::PushArgs args{ws_.handle(), L, static_cast<const char*>(in), static_cast<char*>(out), chunk};
    coll::launch_push(CollOp::kReduceScatter, args, dtype, op, push_blocks(chunk), s);
  } else {
    coll::DirectArgs args = direct_args(in, total, true, out, chunk, false, chunk);
    coll::launch_reduce_scatter(args, dtype, op, direct_blocks(chunk, sms_), s);
  }
}

void Communicator::all_gather(const void* in, void* out, size_t send_count, DataType dtype, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem all_gather", ctx_->device());
  const size_t chunk = bytes_of(send_count, dtype, 1, "all_gather"), total = bytes_of(send_count, dtype, size(), "all_gather");
  Prepared p = prepare(CollOp::kAllGather, algo, dtype, ReduceOp::kSum, 0, send_count, in, chunk, out, total, chunk);
  if (p.skip) return;
  if (p.algo == Algo::kNccl) {
    nccl_check(ncclAllGather(in, out, chunk, ncclUint8, nccl_, s), "ncclAllGather");
    nccl_started(s, "all_gather");
  } else if (p.algo == Algo::kLL) {
    const ws::Layout L = workspace_layout(size(), opt_);
    const coll::LLArgs args = ll_args(ws_.handle(), L, in, out, chunk, 0);
    coll::launch_ll(CollOp::kAllGather, args, dtype, ReduceOp::kSum, ll_blocks(args, sms_, CollOp::kAllGather), s);
  } else {
    coll::DirectArgs args = direct_args(in, chunk, p.algo != Algo::kPush, out, total, p.algo == Algo::kPush || p.in_place, chunk);
    args.push = p.algo == Algo::kPush;
    args.in_place = p.in_place;
    coll::launch_movement(CollOp::kAllGather, args, direct_blocks(total, sms_), s);
  }
}

void Communicator::broadcast(const void* in, void* out, size_t count, DataType dtype, int root, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem broadcast", ctx_->device());
  const size_t bytes = bytes_of(count, dtype, 1, "broadcast");
  Prepared p = prepare(CollOp::kBroadcast, algo, dtype, ReduceOp::kSum, root, count, in, bytes, out, bytes, bytes);
  if (p.skip) return;
  if (p.algo == Algo::kNccl) {
    nccl_check(ncclBroadcast(in, out, bytes, ncclUint8, root, nccl_, s), "ncclBroadcast");
    nccl_started(s, "broadcast");
  } else if (p.algo == Algo::kLL) {
    const ws::Layout L = workspace_layout(size(), opt_);
    const coll::LLArgs args = ll_args(ws_.handle(), L, in, out, bytes, root);
    coll::launch_ll(CollOp::kBroadcast, args, dtype, ReduceOp::kSum, ll_blocks(args, sms_, CollOp::kBroadcast), s);
  } else {
    // direct: every rank pulls from the root's symmetric input (same offset on every rank);
    // push: the root and then every rank write into the peers' symmetric outputs.
    const bool pull = p.algo != Algo::kPush;
    coll::DirectArgs args = direct_args(in, bytes, pull, out, bytes, !pull, bytes);
    args.push = !pull;
    args.root = root;
    coll::launch_movement(CollOp::kBroadcast, args, direct_blocks(bytes, sms_), s);
  }
}

void Communicator::all_to_all(const void* in, void* out, size_t count, DataType dtype, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem all_to_all", ctx_->device());
  const size_t chunk = bytes_of(count, dtype, 1, "all_to_all"), total = bytes_of(count, dtype, size(), "all_to_all");
  Prepared p = prepare(CollOp::kAllToAll, algo, dtype, ReduceOp::kSum, 0, count, in, total, out, total, chunk);
  if (p.skip) return;
  if (p.algo == Algo::kNccl) {
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (int q = 0; q < size(); ++q) {
      nccl_check(ncclSend(static_cast<const char*>(in) + q * chunk, chunk, ncclUint8, q, nccl_, s), "ncclSend");
      nccl_check(ncclRecv(static_cast<char*>(out) + q * chunk, chunk, ncclUint8, q, nccl_, s), "ncclRecv");
    }
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    nccl_started(s, "all_to_all");
  } else if (p.algo == Algo::kLL) {
    const ws::Layout L = workspace_layout(size(), opt_);
    const coll::LLArgs args = ll_args(ws_.handle(), L, in, out, chunk, 0);
    coll::launch_ll(CollOp::kAllToAll, args, dtype, ReduceOp::kSum, ll_blocks(args, sms_, CollOp::kAllToAll), s);
  } else {
    coll::DirectArgs args = direct_args(in, total, p.algo != Algo::kPush, out, total, p.algo == Algo::kPush, chunk);
    args.push = p.algo == Algo::kPush;
    coll::launch_movement(CollOp::kAllToAll, args, direct_blocks(total, sms_), s);
  }
}

void Communicator::all_to_all_v(const void* in, void* out, size_t out_count, const int64_t* send_counts, int64_t* recv_counts,
                                DataType dtype, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem all_to_all_v", ctx_->device());
  const size_t es = bytes_of(1, dtype, 1, "all_to_all_v");
  // (The overlap check sees the first input element; how far the input reaches is checked on the GPU.)
  Prepared p = prepare(CollOp::kAllToAllV, algo, dtype, ReduceOp::kSum, 0, 1, in, es, out, bytes_of(out_count, dtype, 1, "all_to_all_v"), 0,
                       send_counts, recv_counts);
  SymmetricBuffer in_buf = heap_->find(in);
  const size_t in_capacity = (in_buf.bytes() - static_cast<size_t>(static_cast<const char*>(in) - static_cast<const char*>(in_buf.ptr()))) / es;
  // (One block instead of the whole grid was 0.2 us faster at 8 B on 4 x H100, session 26: the
  // grid stays, which the direct branch needs. SYMMEM_A2AV_MAX_BLOCKS, a compile definition for
  // experiments only (tools/ab.sh define NAME REF SYMMEM_A2AV_MAX_BLOCKS=1), caps it; every rank
  // runs one build, so the grids agree.)
#ifndef SYMMEM_A2AV_MAX_BLOCKS
#define SYMMEM_A2AV_MAX_BLOCKS coll::kMaxBlocks
#endif
  const int blocks = std::max(1, std::min({sms_, coll::kMaxBlocks, SYMMEM_A2AV_MAX_BLOCKS}));
  if (p.algo == Algo::kLL) {
    // The counts travel with the data: send_counts may be any device memory.
    // A symmetric output lets the direct branch write instead of read; the kernel does so only
    // where every rank's output lies at the same place of the same buffer (each says where in its
    // header).
    SymmetricBuffer out_buf = out_count ? heap_->find(out, bytes_of(out_count, dtype, 1, "all_to_all_v")) : SymmetricBuffer();
    const uint64_t out_place = out_buf.valid() ? out_buf.placement() + static_cast<uint64_t>(static_cast<char*>(out) -
                                                                                           static_cast<char*>(out_buf.ptr()))
                                               : 0;
    coll::A2AVArgs args{ws_.handle(), workspace_layout(size(), opt_), in_buf.handle(),
                        static_cast<const char*>(in), static_cast<char*>(out), out_buf.valid() ? out_buf.handle() : DeviceHandle{},
                        out_place, send_counts, recv_counts, in_capacity, out_count, es};
    coll::launch_ll_a2av(args, blocks, s);
    return;
  }
  SymmetricBuffer counts_buf = heap_->find(send_counts, sizeof(int64_t) * size());  // (valid: prepare checked it)
  coll::DirectArgs args = direct_args(in, 1, true, out, 0, false, es);
  args.counts_h = counts_buf.handle();
  args.counts = send_counts;
  args.recv_counts = recv_counts;
  args.out_capacity = out_count;
  args.in_capacity = in_capacity;
  coll::launch_movement(CollOp::kAllToAllV, args, blocks, s);
}

// ---- the rooted collectives ----------------------------------------------------------------
// Only the root's output (reduce, gather) or input (scatter) is read or written; every rank
// launches the same kernel with the same grid (sizes and the team's SM count), whose barriers or
// LL tokens every rank takes (ll_rooted.cu and movement.cu have the arguments).
void Communicator::reduce(const void* in, void* out, size_t count, DataType dtype, ReduceOp op, int root, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem reduce", ctx_->device());
  const size_t bytes = bytes_of(count, dtype, 1, "reduce");
  Prepared p = prepare(CollOp::kReduce, algo, dtype, op, root, count, in, bytes, out, bytes, bytes);
  if (p.skip) return;
  if (p.algo == Algo::kNccl) {
    nccl_check(ncclReduce(in, out, count, nccl_type(dtype), nccl_op(op), root, nccl_, s), "ncclReduce");
    nccl_started(s, "reduce");
  } else if (p.algo == Algo::kLL) {
    const ws::Layout L = workspace_layout(size(), opt_);
    const coll::LLArgs args = ll_args(ws_.handle(), L, in, out, bytes, root, 0, detail::ll_narrow_only(CollOp::kReduce, dtype));
    coll::launch_ll_rooted(CollOp::kReduce, args, dtype, op, ll_blocks(args, sms_, CollOp::kReduce), s);
  } else {  // one_shot: the root reads every input
    coll::DirectArgs args = direct_args(in, bytes, true, out, bytes, false, bytes);
    args.root = root;
    args.rooted = true;
    coll::launch_all_reduce(Algo::kOneShot, args, dtype, op, direct_blocks(bytes, sms_), s);
  }
}

void Communicator::gather(const void* in, void* out, size_t send_count, DataType dtype, int root, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem gather", ctx_->device());
  move_rooted(CollOp::kGather, in, out, send_count, dtype, root, s, algo);
}

void Communicator::scatter(const void* in, void* out, size_t recv_count, DataType dtype, int root, cudaStream_t s, Algo algo) {
  detail::CallScope call("symmem scatter", ctx_->device());
  move_rooted(CollOp::kScatter, in, out, recv_count, dtype, root, s, algo);
}

// Gather and scatter, one the other's mirror: `count` elements a rank's chunk; gather's input and
// scatter's output are a chunk, the other buffer every rank's chunk.
//   ll      through the workspace (ll_rooted.cu);
//   direct  pulls: the root every input (gather), every rank its chunk of the root's (scatter);
//   push    writes: every rank into the root's output (gather), the root into every rank's (scatter).
void Communicator::move_rooted(CollOp op, const void* in, void* out, size_t count, DataType dtype, int root, cudaStream_t s, Algo algo) {
  const bool gather = op == CollOp::kGather;
  const char* n = coll_name(op);
  const size_t chunk = bytes_of(count, dtype, 1, n), total = bytes_of(count, dtype, size(), n);
  const size_t in_bytes = gather ? chunk : total, out_bytes = gather ? total : chunk;
  Prepared p = prepare(op, algo, dtype, ReduceOp::kSum, root, count, in, in_bytes, out, out_bytes, chunk);
  if (p.skip) return;
  if (p.algo == Algo::kNccl) {
    nccl_check(detail::nccl_rooted_move(gather, in, out, chunk, root, nccl_, s), gather ? "ncclGather" : "ncclScatter");
    nccl_started(s, n);
  } else if (p.algo == Algo::kLL) {
    const ws::Layout L = workspace_layout(size(), opt_);
    const coll::LLArgs args = ll_args(ws_.handle(), L, in, out, chunk, root);
    coll::launch_ll_rooted(op, args, dtype, ReduceOp::kSum, ll_blocks(args, sms_, op), s);
  } else {
    const bool push = p.algo == Algo::kPush;
    coll::DirectArgs args = direct_args(in, in_bytes, !push, out, out_bytes, push, chunk);
    args.push = push;
    args.root = root;
    coll::launch_movement(op, args, direct_blocks(total, sms_), s);
  }
}

}  // namespace symmem
