#pragma once
// Collectives over the GPUs of one host, stream-ordered and capturable in CUDA graphs:
// all-reduce, reduce-scatter, all-gather, broadcast, all-to-all and all-to-all-v, and the rooted
// reduce, gather and scatter.
//
// Each call picks an algorithm from the tuning table (or takes the one asked for):
//   ll        flag-in-data pushes into the communicator's workspace; no barrier; any buffers.
//   one_shot  every rank reads every peer's input directly (input symmetric, output any); reduce:
//             the root alone does.
//   two_shot  each rank reduces its shard and pushes it to every peer (input and output symmetric).
//   direct    the pull form of the data-movement collectives (input symmetric, output any); gather:
//             the root pulls every rank's input; scatter: every rank pulls its chunk of the root's.
//   push      all-reduce / reduce-scatter: each block pushes its part into the peers' workspace
//             and raises a flag; no barrier; any buffers, up to 2 x ll_max_bytes per peer.
//             all-gather / all-to-all / broadcast: each rank writes into the peers' (symmetric)
//             outputs; links carry only writes, which run faster than reads when both directions
//             are busy. gather: every rank writes into the root's output; scatter: the root into
//             every rank's.
//   two_shot_push  2-rank all-reduce with writes only: each rank sends the peer its half into the
//             peer's (symmetric) output, reduces its own half, and writes the result to both.
//   nccl      NCCL, for what symmem has no faster path for, and for ordinary buffers at large sizes.
// "Symmetric" means the pointer lies in a buffer of this communicator's heap (Communicator::alloc)
// at the same offset on every rank: those paths are zero-copy.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "symmem/context.hpp"
#include "symmem/export.hpp"
#include "symmem/heap.hpp"
#include "symmem/types.hpp"

struct ncclComm;  // NCCL's communicator; no NCCL header is needed to use symmem

namespace symmem {

namespace coll {
struct DirectArgs;
}  // namespace coll

enum class CollOp : int { kAllReduce = 0, kReduceScatter, kAllGather, kBroadcast, kAllToAll, kAllToAllV, kReduce, kGather, kScatter };
/// The operations whose output (reduce, gather) or input (scatter, broadcast) only the root has.
inline bool coll_rooted(CollOp op) {
  return op == CollOp::kBroadcast || op == CollOp::kReduce || op == CollOp::kGather || op == CollOp::kScatter;
}
/// The operations whose message is one chunk from or for every rank (a call's size is its count
/// times the ranks): reduce_scatter, all_gather, all_to_all, gather, scatter.
inline bool coll_chunked(CollOp op) {
  return op == CollOp::kReduceScatter || op == CollOp::kAllGather || op == CollOp::kAllToAll || op == CollOp::kGather ||
         op == CollOp::kScatter;
}
/// The operations that reduce (take a ReduceOp).
inline bool coll_reducing(CollOp op) {
  return op == CollOp::kAllReduce || op == CollOp::kReduceScatter || op == CollOp::kReduce;
}
enum class Algo : int { kAuto = 0, kNccl, kLL, kOneShot, kTwoShot, kDirect, kPush, kTwoShotPush };

SYMMEM_API const char* coll_name(CollOp op);
SYMMEM_API const char* algo_name(Algo a);
SYMMEM_API CollOp parse_coll(const std::string& s);
SYMMEM_API Algo parse_algo(const std::string& s);

/// Which algorithm to use, by operation, dtype, ranks and message size (bytes of the largest
/// buffer: the all-reduce input, the all-gather output, the reduce-scatter input...).
class SYMMEM_API TuningTable {
 public:
  struct Entry {
    CollOp op;
    int dtype;          // a DataType, or -1 for any
    int nranks;         // 0 for any
    size_t max_bytes;   // this entry covers sizes up to here
    Algo algo;
  };
  /// The built-in table for H100/H200 NVLink machines (measured; see bench/results).
  static TuningTable defaults();
  /// Reads the text form (`op dtype nranks max_bytes algo` per line, '*' for any, '#' comments).
  static TuningTable parse(const std::string& text, const std::string& origin);
  static TuningTable load(const std::string& path);
  std::string to_text() const;
  void add(const Entry& e) { entries_.push_back(e); }
  /// Raises the last entry's max_bytes (a measured table's largest size covers all above it).
  void extend_last(size_t max_bytes) {
    if (!entries_.empty()) entries_.back().max_bytes = max_bytes;
  }
  /// The first entry (in file order) that matches and does not name `skip`; kNccl when none does.
  /// (A table never names kAuto: the default skips nothing.)
  Algo lookup(CollOp op, DataType dtype, int nranks, size_t bytes, Algo skip = Algo::kAuto) const;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

struct CommOptions {
  /// Largest LL payload per peer; push carries twice this. The workspace holds 8 x nranks x this.
  size_t ll_max_bytes = size_t(1) << 20;
  /// Algorithm table; empty: SYMMEM_TUNING_FILE if set, else the built-in defaults.
  std::string tuning_file;
};

/// Collectives over a team of one host. Calls are collective: every member makes the same calls
/// in the same order, with the same op, count, dtype, reduction, root and algorithm, and buffers
/// of the same kind (from Communicator::alloc at the same offset on every rank, or ordinary device
/// memory; in place or not). The algorithm and grid are chosen from those arguments, the team
/// size, the tuning table and the smallest SM count of the team, so ranks that keep this contract
/// agree without talking. SYMMEM_DEBUG_CHECKS=1 compares every argument across ranks on every call
/// and raises InvalidArgument on every rank where they differ. A rank that breaks the contract
/// without the checks never hangs the others forever: every symmem wait is bounded (Timeout), and
/// a call routed to NCCL that stays unfinished past the bound is aborted by a watchdog.
///
/// Per operation: count 0 is a no-op (on every rank together). In place: all_reduce in == out;
/// reduce_scatter out == in + rank * recv_count; all_gather in == out + rank * send_count;
/// broadcast and reduce in == out; gather (on the root) in == out + root * send_count; scatter (on
/// the root) out == in + root * recv_count; all_to_all and all_to_all_v never. Any other overlap of
/// in and out is rejected. Pointers must be aligned to the dtype's size. Operations of one communicator must be
/// ordered on the GPU (one stream, or streams joined by events). Operations of several
/// communicators may overlap on separate streams if every rank issues them in the same order (as
/// with NCCL): one symmem kernel may occupy every SM (2-rank LL grids take two blocks an SM, MoE
/// and the overlap GEMMs all of them), and a kernel whose peer's GPU is held by another
/// communicator's kernel, itself waiting for this GPU, waits until the bound (Timeout).
///
/// Failure: after a Timeout (or abort()) the communicator is failed: every later call raises
/// symmem::Error saying so, and the only way on is a new communicator.
class SYMMEM_API Communicator {
 public:
  /// Over the context's world, which must share one host.
  explicit Communicator(std::shared_ptr<Context> ctx, CommOptions opt = {});
  /// Over any team of one host (from Team::split, say): its own heap, workspace and NCCL
  /// communicator. Collective over the team.
  Communicator(std::shared_ptr<Context> ctx, Team team, CommOptions opt = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// A communicator over the members of this one with the same color, ordered by (key, rank);
  /// nullptr for a negative color. Collective over this communicator's team.
  std::unique_ptr<Communicator> split(int color, int key) const;

  int rank() const;
  int size() const;
  const Team& team() const;
  Heap& heap() { return *heap_; }
  Context& context() { return *ctx_; }
  /// Whether NCCL serves this team (not where ranks share a GPU).
  bool has_nccl() const { return nccl_ != nullptr; }
  /// Whether two ranks of this team run on one GPU (by PCI bus id; the same answer on every rank).
  bool shares_gpu() const { return shares_gpu_; }
  /// The NCCL communicator symmem uses (an ncclComm_t), or nullptr: for programs that call NCCL
  /// on the same ranks themselves.
  void* nccl_comm() const { return nccl_; }
  const TuningTable& tuning() const { return table_; }
  void set_tuning(TuningTable t) { table_ = std::move(t); }
  /// A symmetric buffer from this communicator's heap (collective).
  SymmetricBuffer alloc(size_t bytes) { return heap_->alloc(bytes); }
  void free(SymmetricBuffer& b) { heap_->free(b); }

  /// The bound of every device wait (and of NCCL calls, through the watchdog), from now on, for
  /// operations already enqueued too. The setting belongs to the context: it applies to every
  /// communicator of this process.
  void set_timeout_ms(int ms);
  /// Marks the communicator failed, makes every symmem wait of this process that is still
  /// running give up, aborts NCCL, and releases the heap without talking to peers. Never hangs.
  void abort();
  /// Why the communicator failed ("" while it works).
  std::string failure() const;

  /// out[i] = op over ranks of in[i], for i < count.
  void all_reduce(const void* in, void* out, size_t count, DataType dtype, ReduceOp op, cudaStream_t stream,
                  Algo algo = Algo::kAuto);
  /// out[i] = op over ranks of in[rank * recv_count + i], for i < recv_count.
  void reduce_scatter(const void* in, void* out, size_t recv_count, DataType dtype, ReduceOp op, cudaStream_t stream,
                      Algo algo = Algo::kAuto);
  /// out[r * send_count + i] = in of rank r [i].
  void all_gather(const void* in, void* out, size_t send_count, DataType dtype, cudaStream_t stream, Algo algo = Algo::kAuto);
  /// out = root's in (in is read on the root only; other ranks may pass nullptr).
  void broadcast(const void* in, void* out, size_t count, DataType dtype, int root, cudaStream_t stream, Algo algo = Algo::kAuto);
  /// out[r * count + i] = in of rank r [me * count + i].
  void all_to_all(const void* in, void* out, size_t count, DataType dtype, cudaStream_t stream, Algo algo = Algo::kAuto);
  /// Variable splits with counts on the GPU (no host synchronisation): send_counts is an int64
  /// array [nranks] (elements this rank sends to each peer, packed in rank order in `in`, which
  /// must be symmetric, at the same place on every rank), symmetric for algo=direct, any device
  /// memory for ll. Received data is packed in rank order in `out`, which holds out_count elements
  /// (a rank whose out_count is 0 may pass a null out); recv_counts (device int64 [nranks], may be
  /// null) receives what came from each peer. The counts are checked on the GPU before anything moves: a negative count, a rank
  /// that sends more than its input holds, or one that would receive more than its out_count
  /// moves nothing on any rank and raises InvalidArgument (naming rank, peer and count) on every
  /// rank at the next call or Context::synchronize.
  /// Algorithms: ll (the default) carries splits up to 256 KiB per peer with the counts, in flag-in-
  /// data lines, and switches every rank to direct when any split is larger; direct always pulls.
  void all_to_all_v(const void* in, void* out, size_t out_count, const int64_t* send_counts, int64_t* recv_counts,
                    DataType dtype, cudaStream_t stream, Algo algo = Algo::kAuto);

  /// The rooted operations (NCCL's ncclReduce, ncclGather, ncclScatter). Only the root has the
  /// output of reduce and gather and the input of scatter; other ranks may pass nullptr there,
  /// but for the forms that reach that buffer on the root through their own address (gather
  /// with algo=push, scatter with algo=direct: pass the root's buffer's address, a symmetric one).
  /// auto decides from the buffer every rank passes (reduce and gather: in; scatter: out).
  ///   reduce   ll (to its capacity), one_shot (in symmetric: the root reads every input), nccl.
  ///   gather   ll, direct (in symmetric: the root pulls), push (out symmetric: every rank writes
  ///            into the root's), nccl.
  ///   scatter  ll, push (out symmetric: the root writes into every rank's), direct (in symmetric:
  ///            every rank pulls its chunk from the root's), nccl.
  /// On the root, out = op over ranks of in[i], for i < count.
  void reduce(const void* in, void* out, size_t count, DataType dtype, ReduceOp op, int root, cudaStream_t stream,
              Algo algo = Algo::kAuto);
  /// On the root, out[r * send_count + i] = in of rank r [i].
  void gather(const void* in, void* out, size_t send_count, DataType dtype, int root, cudaStream_t stream, Algo algo = Algo::kAuto);
  /// out[i] = the root's in[rank * recv_count + i].
  void scatter(const void* in, void* out, size_t recv_count, DataType dtype, int root, cudaStream_t stream, Algo algo = Algo::kAuto);

  /// The algorithm kAuto picks for these arguments (after the buffer checks).
  Algo select(CollOp op, DataType dtype, size_t bytes, bool in_symmetric, bool out_symmetric, bool in_place) const;

 private:
  struct Prepared;
  struct Watchdog;
  void init(Team team);
  void usable(const char* op) const;
  void set_failed(const std::string& why) const;
  Prepared prepare(CollOp op, Algo asked, DataType dtype, ReduceOp redop, int root, size_t count, const void* in,
                   size_t in_bytes, const void* out, size_t out_bytes, size_t ll_bytes, const int64_t* send_counts = nullptr,
                   const int64_t* recv_counts = nullptr) const;
  Prepared prepare_local(CollOp op, Algo asked, DataType dtype, ReduceOp redop, int root, size_t count, const void* in,
                         size_t in_bytes, const void* out, size_t out_bytes, size_t ll_bytes, const int64_t* send_counts,
                         const int64_t* recv_counts) const;
  coll::DirectArgs direct_args(const void* in, size_t in_bytes, bool need_in, void* out, size_t out_bytes, bool need_out,
                              size_t bytes) const;
  void nccl_started(cudaStream_t s, const char* what);
  void move_rooted(CollOp op, const void* in, void* out, size_t count, DataType dtype, int root, cudaStream_t stream, Algo algo);
  std::shared_ptr<Context> ctx_;
  CommOptions opt_;
  std::unique_ptr<Heap> heap_;
  ::ncclComm* nccl_ = nullptr;
  TuningTable table_;
  SymmetricBuffer ws_;  // the sequenced workspace (LL slots, push stages) + barrier channels
  int sms_ = 132;       // smallest SM count of the team
  bool shares_gpu_ = false;
  mutable std::mutex fail_mu_;
  mutable std::string failed_;
  std::unique_ptr<Watchdog> watchdog_;
};

namespace detail {
/// Whether an algorithm can run with these buffers ("" if so, else why not). `ll_capacity`:
/// CommOptions::ll_max_bytes; `dtype` matters to LL's capacity (ll_capacity_for).
SYMMEM_API std::string algo_unfit(CollOp op, Algo a, bool in_symmetric, bool out_symmetric, bool in_place,
                                  size_t ll_bytes, size_t ll_capacity, int nranks = 0, DataType dtype = DataType::kUInt8);
/// True where LL must carry an operation in narrow lines (8 payload bytes a line): reductions of
/// 8-byte elements, which a wide line's 12 bytes would split.
SYMMEM_API bool ll_narrow_only(CollOp op, DataType dtype);
/// The LL payload a peer an operation may carry on slots sized for `ll_max_bytes`
/// (CommOptions::ll_max_bytes, in wide lines): that, or where ll_narrow_only, the slot's lines
/// times 8 bytes (two thirds of it).
SYMMEM_API size_t ll_capacity_for(CollOp op, DataType dtype, size_t ll_max_bytes);
/// What kAuto runs: the table's choice for (op, dtype, nranks, bytes), or, where it cannot run with
/// these buffers (or NCCL is absent), the fallback. A function of arguments every rank shares
/// (given the buffer contract in Communicator's comment); Communicator::select calls it.
SYMMEM_API Algo choose_algo(const TuningTable& table, CollOp op, DataType dtype, int nranks, size_t bytes, bool in_symmetric,
                            bool out_symmetric, bool in_place, bool have_nccl, size_t ll_capacity);
/// Whether ranks sharing a GPU (`shares`) look like a mistake: this process sees a GPU for each of
/// the `ranks` and SYMMEM_RANKS_PER_GPU (`ranks_per_gpu`, null where unset) does not ask for
/// sharing. The Communicator then says so once (a warning whatever SYMMEM_DEBUG is). Host-tested.
SYMMEM_API bool sharing_unmeant(bool shares, int visible, int ranks, const char* ranks_per_gpu);
/// LL all-reduce of `bytes` over n ranks whose LL slots hold `slot_lines` 16-byte lines: the chunk
/// it runs two-shot over (every rank owns one; a multiple of 8 bytes), or 0 for one-shot. Two-shot
/// from just past 256 KiB at 3 ranks or more (4 x H100: 512 KiB 10.8 us against 14.8 one-shot;
/// below 256 KiB its second hop costs more than the bytes it saves), in wide lines: never for
/// 8-byte elements (ll_narrow_only).
SYMMEM_API size_t ll_two_shot_chunk(size_t bytes, int nranks, size_t slot_lines, DataType dtype = DataType::kUInt8);
/// The grid of an LL operation of `lines` lines a peer over n ranks, `threads` a block, on a team
/// whose smallest GPU has `sms` SMs: facts every rank shares, so every rank launches the same grid.
SYMMEM_API int ll_grid(size_t lines, int nranks, CollOp op, int sms, int threads);
}  // namespace detail

}  // namespace symmem
