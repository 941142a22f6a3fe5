#pragma once
// Collectives over the GPUs of one host, stream-ordered and capturable in CUDA graphs:
// all-reduce, reduce-scatter, all-gather, broadcast, all-to-all and all-to-all-v.
//
// Each call picks an algorithm from the tuning table (or takes the one asked for):
//   ll        flag-in-data pushes into the communicator's workspace; no barrier; any buffers.
//   one_shot  every rank reads every peer's input directly (input symmetric, output any).
//   two_shot  each rank reduces its shard and pushes it to every peer (input and output symmetric).
//   direct    the pull form of the data-movement collectives (input symmetric, output any).
//   push      all-reduce / reduce-scatter: each block pushes its part into the peers' workspace
//             and raises a flag; no barrier; any buffers, up to 2 x ll_max_bytes per peer.
//             all-gather / all-to-all / broadcast: each rank writes into the peers' (symmetric)
//             outputs; links carry only writes, which run faster than reads when both directions
//             are busy.
//   two_shot_push  2-rank all-reduce with writes only: each rank sends the peer its half into the
//             peer's (symmetric) output, reduces its own half, and writes the result to both.
//   nccl      NCCL, for what symmem has no faster path for, and for ordinary buffers at large sizes.
// "Symmetric" means the pointer lies in a buffer of this communicator's heap (Communicator::alloc)
// at the same offset on every rank: those paths are zero-copy.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "symmem/context.hpp"
#include "symmem/export.hpp"
#include "symmem/heap.hpp"
#include "symmem/types.hpp"

namespace symmem {

namespace coll {
struct DirectArgs;
}  // namespace coll

enum class CollOp : int { kAllReduce = 0, kReduceScatter, kAllGather, kBroadcast, kAllToAll, kAllToAllV };
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
  /// The first entry (in file order) that matches; kNccl when none does.
  Algo lookup(CollOp op, DataType dtype, int nranks, size_t bytes) const;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

struct CommOptions {
  /// Largest LL payload per peer (the workspace holds 2 x 2 x nranks x this).
  size_t ll_max_bytes = size_t(1) << 20;
  /// Algorithm table; empty: SYMMEM_TUNING_FILE if set, else the built-in defaults.
  std::string tuning_file;
};

class SYMMEM_API Communicator {
 public:
  /// Collective over the context's world, which must share one host. Also creates an NCCL
  /// communicator (the fallback) over the same ranks.
  explicit Communicator(std::shared_ptr<Context> ctx, CommOptions opt = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;
  Heap& heap() { return *heap_; }
  Context& context() { return *ctx_; }
  ncclComm_t nccl() const { return nccl_; }
  const TuningTable& tuning() const { return table_; }
  void set_tuning(TuningTable t) { table_ = std::move(t); }
  /// A symmetric buffer from this communicator's heap (collective).
  SymmetricBuffer alloc(size_t bytes) { return heap_->alloc(bytes); }
  void free(SymmetricBuffer& b) { heap_->free(b); }

  /// out[i] = op over ranks of in[i], for i < count. In place when in == out.
  void all_reduce(const void* in, void* out, size_t count, DataType dtype, ReduceOp op, cudaStream_t stream,
                  Algo algo = Algo::kAuto);
  /// out[i] = op over ranks of in[rank * recv_count + i], for i < recv_count.
  void reduce_scatter(const void* in, void* out, size_t recv_count, DataType dtype, ReduceOp op, cudaStream_t stream,
                      Algo algo = Algo::kAuto);
  /// out[r * send_count + i] = in of rank r [i].
  void all_gather(const void* in, void* out, size_t send_count, DataType dtype, cudaStream_t stream, Algo algo = Algo::kAuto);
  /// out = root's in (in is read on the root only).
  void broadcast(const void* in, void* out, size_t count, DataType dtype, int root, cudaStream_t stream, Algo algo = Algo::kAuto);
  /// out[r * count + i] = in of rank r [me * count + i].
  void all_to_all(const void* in, void* out, size_t count, DataType dtype, cudaStream_t stream, Algo algo = Algo::kAuto);
  /// Variable splits with counts on the GPU (no host synchronisation): send_counts is a symmetric
  /// int64 array [nranks] (elements this rank sends to each peer, packed in rank order in `in`,
  /// which must be symmetric). Received data is packed in rank order in `out`; recv_counts (device
  /// int64 [nranks], may be null) receives what came from each peer. `out` must hold the total.
  void all_to_all_v(const void* in, void* out, const int64_t* send_counts, int64_t* recv_counts, DataType dtype,
                    cudaStream_t stream);

  /// The algorithm kAuto picks for these arguments (after the buffer checks).
  Algo select(CollOp op, DataType dtype, size_t bytes, bool in_symmetric, bool out_symmetric, bool in_place) const;

 private:
  struct Workspace;
  coll::DirectArgs direct_args(const void* in, size_t in_bytes, bool need_in, void* out, size_t out_bytes, bool need_out,
                              size_t bytes) const;
  Algo resolve(CollOp op, Algo asked, DataType dtype, size_t bytes, size_t ll_bytes, const void* in, size_t in_bytes,
               const void* out, size_t out_bytes) const;
  std::shared_ptr<Context> ctx_;
  std::unique_ptr<Heap> heap_;
  ncclComm_t nccl_ = nullptr;
  TuningTable table_;
  CommOptions opt_;
  SymmetricBuffer ws_;  // LL region + barrier channels
  int sms_ = 132;
};

namespace detail {
/// Whether an algorithm can run with these buffers ("" if so, else why not).
SYMMEM_API std::string algo_unfit(CollOp op, Algo a, bool in_symmetric, bool out_symmetric, bool in_place,
                                  size_t ll_bytes, size_t ll_capacity, int nranks = 0);
}  // namespace detail

}  // namespace symmem
