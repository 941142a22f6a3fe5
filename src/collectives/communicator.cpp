// Communicator: argument checks, algorithm choice, and the launch of each collective.
#include <nccl.h>

#include <algorithm>
#include <cstring>

#include "kernels.hpp"
#include "symmem/collectives.hpp"
#include "symmem/error.hpp"

namespace symmem {

namespace {
ncclDataType_t nccl_type(DataType d) {
  switch (d) {
    case DataType::kFloat32: return ncclFloat32;
    case DataType::kFloat16: return ncclFloat16;
    case DataType::kBFloat16: return ncclBfloat16;
    case DataType::kFp8E4M3: return ncclFloat8e4m3;
    case DataType::kFp8E5M2: return ncclFloat8e5m2;
    case DataType::kInt32: return ncclInt32;
    case DataType::kUInt8: return ncclUint8;
  }
  return ncclUint8;
}
ncclRedOp_t nccl_op(ReduceOp r) {
  switch (r) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kProd: return ncclProd;
    case ReduceOp::kAvg: return ncclAvg;
  }
  return ncclSum;
}
void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) fail<Error>(std::string(what) + " failed: " + ncclGetErrorString(r));
}
bool overlap(const void* a, size_t na, const void* b, size_t nb) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + nb && y < x + na;
}
}  // namespace

Communicator::Communicator(std::shared_ptr<Context> ctx, CommOptions opt) : ctx_(std::move(ctx)), opt_(std::move(opt)) {
  require(ctx_ != nullptr, "Communicator: context is null");
  require(opt_.ll_max_bytes >= 4096 && opt_.ll_max_bytes % 8 == 0,
          "CommOptions::ll_max_bytes=" + std::to_string(opt_.ll_max_bytes) + " must be a multiple of 8, at least 4096");
  heap_ = std::make_unique<Heap>(ctx_);
  const std::string table = !opt_.tuning_file.empty() ? opt_.tuning_file : ctx_->settings().tuning_file;
  table_ = table.empty() ? TuningTable::defaults() : TuningTable::load(table);
  // LL slots: 2 parities x nranks sources x (16-byte line per 8 payload bytes).
  ws_ = heap_->alloc(4 * static_cast<size_t>(size()) * opt_.ll_max_bytes);
  SYMMEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, ctx_->device()));
  // NCCL over the same ranks: the fallback. Ranks that share a GPU cannot form one; then only
  // symmem's own algorithms run and asking for NCCL fails with that reason.
  ncclUniqueId id;
  if (rank() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  auto ids = heap_->team().all_gather(rank() == 0 ? std::string(reinterpret_cast<char*>(&id), sizeof(id)) : "", "NCCL id");
  std::memcpy(&id, ids[0].data(), sizeof(id));
  auto devs = heap_->team().all_gather(std::to_string(ctx_->device()), "device check");
  std::sort(devs.begin(), devs.end());
  if (std::adjacent_find(devs.begin(), devs.end()) == devs.end())
    nccl_check(ncclCommInitRank(&nccl_, size(), id, rank()), "ncclCommInitRank");
}

Communicator::~Communicator() {
  if (ws_.valid()) {
    try {
      heap_->free(ws_);
    } catch (...) {
    }
  }
  if (nccl_) ncclCommDestroy(nccl_);
}

int Communicator::rank() const { return heap_->team().rank(); }
int Communicator::size() const { return heap_->team().size(); }

Algo Communicator::select(CollOp op, DataType dtype, size_t bytes, bool in_sym, bool out_sym, bool in_place) const {
  const size_t ll = op == CollOp::kReduceScatter || op == CollOp::kAllToAll ? bytes / size() : bytes;
  Algo a = table_.lookup(op, dtype, size(), bytes);
  if (detail::algo_unfit(op, a, in_sym, out_sym, in_place, ll, opt_.ll_max_bytes, size()).empty()) {
    if (a != Algo::kNccl || nccl_ != nullptr) return a;
  }
  // The table's choice cannot run with these buffers: the zero-copy paths in order, LL, then NCCL.
  for (Algo b : {Algo::kTwoShot, Algo::kDirect, Algo::kPush, Algo::kLL})
    if (detail::algo_unfit(op, b, in_sym, out_sym, in_place, ll, opt_.ll_max_bytes, size()).empty()) {
      if (b == Algo::kTwoShot || b == Algo::kDirect || b == Algo::kPush) {
        if (a == Algo::kOneShot || a == Algo::kTwoShot || a == Algo::kDirect || a == Algo::kPush || a == Algo::kTwoShotPush) return b;
        continue;  // the table chose LL or NCCL for this size: keep to that family
      }
      return b;
    }
  return Algo::kNccl;
}

Algo Communicator::resolve(CollOp op, Algo asked, DataType dtype, size_t bytes, size_t ll_bytes, const void* in,
                           size_t in_bytes, const void* out, size_t out_bytes) const {
  const bool in_sym = in != nullptr && heap_->find(in, in_bytes).valid();
  const bool out_sym = out != nullptr && heap_->find(out, out_bytes).valid();
  const bool in_place = in != nullptr && overlap(in, in_bytes, out, out_bytes);
  Algo a = asked == Algo::kAuto ? select(op, dtype, bytes, in_sym, out_sym, in_place) : asked;
  std::string why = detail::algo_unfit(op, a, in_sym, out_sym, in_place, ll_bytes, opt_.ll_max_bytes, size());
  if (why.empty() && a == Algo::kNccl && nccl_ == nullptr) why = "no NCCL communicator (ranks share a GPU)";
  if (!why.empty()) fail(std::string(coll_name(op)) + " with algo=" + algo_name(a) + ": " + why);
  if (ctx_->settings().debug_checks) {
    std::string mine = std::string(coll_name(op)) + " bytes=" + std::to_string(bytes) + " dtype=" + dtype_name(dtype) +
                       " algo=" + algo_name(a);
    auto all = heap_->team().all_gather(mine, std::string(coll_name(op)) + " argument check");
    for (size_t r = 0; r < all.size(); ++r)
      if (all[r] != mine)
        fail(std::string(coll_name(op)) + ": arguments differ across ranks: this rank has '" + mine + "', rank " +
             std::to_string(heap_->team().global_rank(static_cast<int>(r))) + " has '" + all[r] + "'");
  }
  return a;
}

static int ll_blocks(size_t bytes, int sms) {
  const size_t lines = (bytes + 7) / 8;
  const size_t b = (lines + 127) / 128;  // ~128 lines a block: more SMs polling at once
  return static_cast<int>(std::clamp<size_t>(b, 1, static_cast<size_t>(std::min(sms, 64))));
}
static int push_blocks(size_t bytes) {
  return static_cast<int>(std::clamp<size_t>((bytes + 8191) / 8192, 1, coll::kPushMaxBlocks));
}
static int direct_blocks(size_t bytes, int sms) {
  const size_t b = (bytes + coll::kThreads * 32 - 1) / (coll::kThreads * 32);
  return static_cast<int>(std::clamp<size_t>(b, 1, static_cast<size_t>(std::min(sms, coll::kMaxBlocks))));
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

static void check_common(const char* op, const void* in, const void* out, size_t count, DataType dtype, bool reduce) {
  require(static_cast<int>(dtype) >= 0 && static_cast<int>(dtype) <= static_cast<int>(DataType::kUInt8),
          std::string(op) + ": dtype is not a symmem::DataType");
  if (reduce) require(reducible(dtype), std::string(op) + ": dtype " + dtype_name(dtype) + " has no reductions; use a numeric type");
  if (count == 0) return;
  require(in != nullptr, std::string(op) + ": in is null");
  require(out != nullptr, std::string(op) + ": out is null");
}

void Communicator::all_reduce(const void* in, void* out, size_t count, DataType dtype, ReduceOp op, cudaStream_t s, Algo algo) {
  check_common("all_reduce", in, out, count, dtype, true);
  require(static_cast<int>(op) >= 0 && static_cast<int>(op) <= 4, "all_reduce: op is not a symmem::ReduceOp");
  if (count == 0) return;
  ctx_->check("all_reduce");
  const size_t bytes = count * dtype_size(dtype);
  Algo a = resolve(CollOp::kAllReduce, algo, dtype, bytes, bytes, in, bytes, out, bytes);
  if (a == Algo::kNccl) {
    nccl_check(ncclAllReduce(in, out, count, nccl_type(dtype), nccl_op(op), nccl_, s), "ncclAllReduce");
  } else if (a == Algo::kLL) {
    coll::LLArgs args{ws_.handle(), static_cast<const char*>(in), static_cast<char*>(out), bytes, 2 * opt_.ll_max_bytes / 16, 0};
    coll::launch_ll(CollOp::kAllReduce, args, dtype, op, ll_blocks(bytes, sms_), s);
  } else if (a == Algo::kPush) {
    coll::PushArgs args{ws_.handle(), static_cast<const char*>(in), static_cast<char*>(out), bytes, 2 * opt_.ll_max_bytes};
    coll::launch_push(CollOp::kAllReduce, args, dtype, op, push_blocks(bytes), s);
  } else {
    coll::DirectArgs args = direct_args(in, bytes, a != Algo::kTwoShotPush, out, bytes,
                                        a == Algo::kTwoShot || a == Algo::kTwoShotPush, bytes);
    coll::launch_all_reduce(a, args, dtype, op, direct_blocks(bytes, sms_), s);
  }
}

void Communicator::reduce_scatter(const void* in, void* out, size_t recv_count, DataType dtype, ReduceOp op, cudaStream_t s, Algo algo) {
  check_common("reduce_scatter", in, out, recv_count, dtype, true);
  require(static_cast<int>(op) >= 0 && static_cast<int>(op) <= 4, "reduce_scatter: op is not a symmem::ReduceOp");
  if (recv_count == 0) return;
  ctx_->check("reduce_scatter");
  const size_t chunk = recv_count * dtype_size(dtype), total = chunk * size();
  Algo a = resolve(CollOp::kReduceScatter, algo, dtype, total, chunk, in, total, out, chunk);
  if (a == Algo::kNccl) {
    nccl_check(ncclReduceScatter(in, out, recv_count, nccl_type(dtype), nccl_op(op), nccl_, s), "ncclReduceScatter");
  } else if (a == Algo::kLL) {
    coll::LLArgs args{ws_.handle(), static_cast<const char*>(in), static_cast<char*>(out), chunk, 2 * opt_.ll_max_bytes / 16, 0};
    coll::launch_ll(CollOp::kReduceScatter, args, dtype, op, ll_blocks(chunk, sms_), s);
  } else if (a == Algo::kPush) {
    coll::PushArgs args{ws_.handle(), static_cast<const char*>(in), static_cast<char*>(out), chunk, 2 * opt_.ll_max_bytes};
    coll::launch_push(CollOp::kReduceScatter, args, dtype, op, push_blocks(chunk), s);
  } else {
    coll::DirectArgs args = direct_args(in, total, true, out, chunk, false, chunk);
    coll::launch_reduce_scatter(args, dtype, op, direct_blocks(chunk, sms_), s);
  }
}

void Communicator::all_gather(const void* in, void* out, size_t send_count, DataType dtype, cudaStream_t s, Algo algo) {
  check_common("all_gather", in, out, send_count, dtype, false);
  if (send_count == 0) return;
  ctx_->check("all_gather");
  const size_t chunk = send_count * dtype_size(dtype), total = chunk * size();
  Algo a = resolve(CollOp::kAllGather, algo, dtype, total, chunk, in, chunk, out, total);
  if (a == Algo::kNccl) {
    nccl_check(ncclAllGather(in, out, chunk, ncclUint8, nccl_, s), "ncclAllGather");
  } else if (a == Algo::kLL) {
    coll::LLArgs args{ws_.handle(), static_cast<const char*>(in), static_cast<char*>(out), chunk, 2 * opt_.ll_max_bytes / 16, 0};
    coll::launch_ll(CollOp::kAllGather, args, dtype, ReduceOp::kSum, ll_blocks(chunk, sms_), s);
  } else {
    coll::DirectArgs args = direct_args(in, chunk, a != Algo::kPush, out, total, a == Algo::kPush, chunk);
    args.push = a == Algo::kPush;
    coll::launch_movement(CollOp::kAllGather, args, direct_blocks(total, sms_), s);
  }
}

void Communicator::broadcast(const void* in, void* out, size_t count, DataType dtype, int root, cudaStream_t s, Algo algo) {
  require(root >= 0 && root < size(), "broadcast: root=" + std::to_string(root) + " is out of range [0, " + std::to_string(size()) + ")");
  const void* in_checked = rank() == root ? in : out;  // only the root's input is read
  check_common("broadcast", in_checked, out, count, dtype, false);
  if (count == 0) return;
  ctx_->check("broadcast");
  const size_t bytes = count * dtype_size(dtype);
  Algo a = resolve(CollOp::kBroadcast, algo, dtype, bytes, bytes, in, bytes, out, bytes);
  if (a == Algo::kNccl) {
    nccl_check(ncclBroadcast(in, out, bytes, ncclUint8, root, nccl_, s), "ncclBroadcast");
  } else if (a == Algo::kLL) {
    coll::LLArgs args{ws_.handle(), static_cast<const char*>(in), static_cast<char*>(out), bytes, 2 * opt_.ll_max_bytes / 16, root};
    coll::launch_ll(CollOp::kBroadcast, args, dtype, ReduceOp::kSum, ll_blocks(bytes, sms_), s);
  } else {
    coll::DirectArgs args = direct_args(in, bytes, a != Algo::kPush, out, bytes, a == Algo::kPush, bytes);
    args.push = a == Algo::kPush;
    args.root = root;
    coll::launch_movement(CollOp::kBroadcast, args, direct_blocks(bytes, sms_), s);
  }
}

void Communicator::all_to_all(const void* in, void* out, size_t count, DataType dtype, cudaStream_t s, Algo algo) {
  check_common("all_to_all", in, out, count, dtype, false);
  if (count == 0) return;
  ctx_->check("all_to_all");
  const size_t chunk = count * dtype_size(dtype), total = chunk * size();
  Algo a = resolve(CollOp::kAllToAll, algo, dtype, total, chunk, in, total, out, total);
  if (a == Algo::kNccl) {
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (int p = 0; p < size(); ++p) {
      nccl_check(ncclSend(static_cast<const char*>(in) + p * chunk, chunk, ncclUint8, p, nccl_, s), "ncclSend");
      nccl_check(ncclRecv(static_cast<char*>(out) + p * chunk, chunk, ncclUint8, p, nccl_, s), "ncclRecv");
    }
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  } else if (a == Algo::kLL) {
    coll::LLArgs args{ws_.handle(), static_cast<const char*>(in), static_cast<char*>(out), chunk, 2 * opt_.ll_max_bytes / 16, 0};
    coll::launch_ll(CollOp::kAllToAll, args, dtype, ReduceOp::kSum, ll_blocks(chunk, sms_), s);
  } else {
    coll::DirectArgs args = direct_args(in, total, a != Algo::kPush, out, total, a == Algo::kPush, chunk);
    args.push = a == Algo::kPush;
    coll::launch_movement(CollOp::kAllToAll, args, direct_blocks(total, sms_), s);
  }
}

void Communicator::all_to_all_v(const void* in, void* out, const int64_t* send_counts, int64_t* recv_counts, DataType dtype,
                                cudaStream_t s) {
  require(in != nullptr && out != nullptr, "all_to_all_v: in and out must not be null");
  require(send_counts != nullptr, "all_to_all_v: send_counts is null");
  ctx_->check("all_to_all_v");
  SymmetricBuffer in_buf = heap_->find(in);
  SymmetricBuffer counts_buf = heap_->find(send_counts, sizeof(int64_t) * size());
  require(in_buf.valid(), "all_to_all_v: in must lie in a buffer from Communicator::alloc (peers read it directly)");
  require(counts_buf.valid(), "all_to_all_v: send_counts must be an int64 array [nranks] in a buffer from Communicator::alloc");
  require((reinterpret_cast<uintptr_t>(send_counts) & 7u) == 0, "all_to_all_v: send_counts must be 8-byte aligned");
  resolve(CollOp::kAllToAllV, Algo::kDirect, dtype, 0, 0, in, 1, out, 1);
  coll::DirectArgs args = direct_args(in, 1, true, out, 0, false, dtype_size(dtype));
  args.counts_h = counts_buf.handle();
  args.counts = send_counts;
  args.recv_counts = recv_counts;
  coll::launch_movement(CollOp::kAllToAllV, args, std::min(sms_, coll::kMaxBlocks), s);
}

}  // namespace symmem
