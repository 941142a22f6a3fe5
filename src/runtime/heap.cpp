#include "symmem/heap.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <thread>

#include "driver.hpp"
#include "fd_exchange.hpp"
#include "heap_book.hpp"
#include "call_scope.hpp"
#include "log.hpp"
#include "symmem/env.hpp"
#include "symmem/error.hpp"

namespace symmem {

namespace detail {

// One collective cuMem mapping: every member's memory of `size` bytes, mapped here.
struct Arena {
  size_t size = 0;
  std::vector<CUmemGenericAllocationHandle> handles;  // per member; 0 where not held
  std::vector<CUdeviceptr> bases;                      // per member reservation; 0 where none
  std::vector<char> mapped;                            // per member: cuMemMap succeeded
  void unmap();
  ~Arena() { unmap(); }
};

// A buffer: a block of an arena. Block layout on every member: data (bytes, rounded to 256), the
// signal pad, then this member's device tables of peer pointers and pads.
struct Allocation {
  size_t bytes = 0;        // as asked
  size_t pad_offset = 0;   // signal pad starts here (from the block's start)
  size_t block = 0;        // bytes of the block
  int rank = 0, nranks = 0;
  int device = -1;         // this rank's GPU (its context's)
  uint64_t id = 0;         // the allocation's number in this heap (same on every member)
  int slot = -1;           // its row in the host-shared release marks
  int arena = -1;
  size_t offset = 0;
  std::vector<void*> peers;
  std::vector<uint64_t*> signals;
  DeviceHandle handle{};
  bool released = false;
};

std::string check_same_size(const std::vector<size_t>& sizes, const std::vector<int>& ranks) {
  bool same = std::all_of(sizes.begin(), sizes.end(), [&](size_t s) { return s == sizes[0]; });
  if (same) return "";
  std::string msg = "sizes differ across ranks:";
  for (size_t i = 0; i < sizes.size() && i < 16; ++i)
    msg += std::string(i ? "," : "") + " rank " + std::to_string(ranks[i]) + " asked " + std::to_string(sizes[i]);
  return msg + " bytes; every rank must pass the same size";
}

size_t checked_add(size_t a, size_t b, const char* what) {
  if (a > SIZE_MAX - b) fail(std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) + " overflows a size_t");
  return a + b;
}
size_t checked_mul(size_t a, size_t b, const char* what) {
  if (a != 0 && b > SIZE_MAX / a) fail(std::string(what) + ": " + std::to_string(a) + " x " + std::to_string(b) + " overflows a size_t");
  return a * b;
}
size_t checked_round_up(size_t x, size_t align, const char* what) {
  if (align == 0) return x;
  return checked_add(x, align - 1, what) / align * align;
}

}  // namespace detail

using detail::Allocation;
using detail::driver;

// ---- SymmetricBuffer ------------------------------------------------------------------------
static const Allocation& alive(const std::shared_ptr<Allocation>& a) {
  require(a != nullptr, "SymmetricBuffer is empty (default-constructed or freed)");
  require(!a->released, "SymmetricBuffer was freed (Heap::free or the heap was destroyed)");
  return *a;
}
void* SymmetricBuffer::ptr() const { return alive(a_).peers[a_->rank]; }
void* SymmetricBuffer::peer_ptr(int peer) const {
  const Allocation& a = alive(a_);
  require(peer >= 0 && peer < a.nranks, "peer=", peer, " is out of range [0, ", a.nranks, ")");
  return a.peers[peer];
}
size_t SymmetricBuffer::bytes() const { return alive(a_).bytes; }
uint64_t* SymmetricBuffer::signal_pad() const { return alive(a_).signals[a_->rank]; }
uint64_t* SymmetricBuffer::peer_signal_pad(int peer) const {
  const Allocation& a = alive(a_);
  require(peer >= 0 && peer < a.nranks, "peer=", peer, " is out of range [0, ", a.nranks, ")");
  return a.signals[peer];
}
int SymmetricBuffer::rank() const { return alive(a_).rank; }
int SymmetricBuffer::device() const { return alive(a_).device; }
int SymmetricBuffer::nranks() const { return alive(a_).nranks; }
const DeviceHandle& SymmetricBuffer::handle() const { return alive(a_).handle; }
uint64_t SymmetricBuffer::placement() const {
  const Allocation& a = alive(a_);
  return (static_cast<uint64_t>(a.arena) + 1) << 44 | a.offset;  // arenas < 2^20, offsets < 2^44
}
bool SymmetricBuffer::contains(const void* p, size_t n) const {
  if (!a_ || a_->released) return false;
  auto b = reinterpret_cast<uintptr_t>(a_->peers[a_->rank]);
  auto q = reinterpret_cast<uintptr_t>(p);
  return q >= b && n <= a_->bytes && q - b <= a_->bytes - n;
}


// ---- Heap -----------------------------------------------------------------------------------
static CUmemAllocationProp alloc_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

static std::string join_problems(const std::vector<std::string>& all, const Team& team) {
  std::string msg;
  for (size_t i = 0; i < all.size(); ++i)
    if (!all[i].empty()) detail::add_reason(msg, "rank " + std::to_string(team.global_rank(static_cast<int>(i))) + ": " + all[i]);
  return msg;
}

void detail::Arena::unmap() {
  const detail::Driver& d = driver();
  for (size_t j = 0; j < bases.size(); ++j) {
    if (bases[j]) {
      if (mapped[j]) d.cuMemUnmap(bases[j], size);
      d.cuMemAddressFree(bases[j], size);
      bases[j] = 0;
    }
    if (handles[j]) d.cuMemRelease(handles[j]);
    handles[j] = 0;
  }
}

namespace detail {
constexpr size_t kBlockAlign = 4096;

struct Pending {
  std::shared_ptr<Allocation> a;
  cudaEvent_t done = nullptr;  // null: released at once
};

struct HeapState {
  std::unique_ptr<FdExchange> fds;
  std::vector<int> peer_devices;  // CUDA device index of each member, in this process's numbering
  unsigned long fd_seq = 0;
  size_t granularity = 0;
  int timeout_ms = 120000;
  // Host-shared regions: every member's, mapped here (own one writable, all of them readable).
  std::vector<shared::Region*> regions;
  std::vector<std::unique_ptr<Arena>> arenas;   // index = the book's arena index (null: dropped)
  std::map<uintptr_t, std::shared_ptr<Allocation>> live;  // by this member's address
  std::vector<Pending> pending;                // released here, GPU work maybe still running
  uint64_t next_id = 0;
  // Member 0 only.
  std::unique_ptr<SpaceBook> book;
  struct Block { uint64_t id; int arena; size_t offset, bytes; };
  std::map<int, Block> blocks;                 // slot -> block handed out, not yet reclaimed
  std::vector<int> free_slots;
  std::vector<int> released_here;              // slots member 0 has released: reclaim candidates

  shared::Region& mine(int rank) { return *regions[rank]; }
  ~HeapState() {
    for (auto* r : regions)
      if (r) munmap(r, sizeof(shared::Region));
  }
};

// Sends `fd` to every member and returns theirs (own slot -1); closes `fd` if the exchange fails.
std::vector<int> exchange_fd(HeapState& st, int fd) {
  try {
    return st.fds->exchange(fd, st.fd_seq++, st.timeout_ms);
  } catch (...) {
    close(fd);
    throw;
  }
}

// Spins on a host-shared value with a bound (the bootstrap timeout); names what and whom it waited for.
template <class Pred>
void wait_shared(Pred ready, int timeout_ms, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t it = 0; !ready(); ++it) {
    if (it < 2000) continue;
    if (it < 20000) { sched_yield(); continue; }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    if ((it & 255u) == 0 && std::chrono::steady_clock::now() - start > std::chrono::milliseconds(timeout_ms))
      fail<Timeout>(what + ": no answer after " + std::to_string(timeout_ms) + " ms (SYMMEM_BOOTSTRAP_TIMEOUT_MS); is that rank "
                    "still making the same calls in the same order?");
  }
}
}  // namespace detail

using detail::HeapState;
namespace shared = detail::shared;

Heap::Heap(std::shared_ptr<Context> ctx) : Heap(ctx, ctx->world()) {}

Heap::Heap(std::shared_ptr<Context> ctx, Team team) : ctx_(std::move(ctx)), team_(std::move(team)), st_(std::make_unique<HeapState>()) {
  require(ctx_ != nullptr, "Heap: context is null");
  detail::DeviceGuard device(ctx_->device());
  require(team_.valid(), "Heap: the team is invalid");
  require(team_.size() <= pad::kMaxTeam, "Heap: team has " + std::to_string(team_.size()) + " ranks; a symmetric team holds at most " +
                                             std::to_string(pad::kMaxTeam));
  HeapState& st = *st_;
  st.timeout_ms = ctx_->world().bootstrap().config().timeout_ms;
  const int dev = ctx_->device();
  // One host: symmetric memory is mapped through the host's GPUs; traffic between hosts is NCCL's.
  auto hosts = team_.all_gather(detail::host_identity(), "Heap: host check");
  for (auto& h : hosts)
    if (h != hosts[0])
      fail<Unsupported>("Heap: team '" + team_.name() + "' spans several hosts; a symmetric heap covers the ranks of one host: "
                        "build it over team.host_team()");

  // Every member's GPU, and whether it can hold shareable VMM memory.
  std::string problem;
  const detail::Driver& d = driver();
  CUdevice cudev;
  SYMMEM_CU_CHECK(d.cuDeviceGet(&cudev, dev));
  int vmm = 0, fdok = 0;
  SYMMEM_CU_CHECK(d.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, cudev));
  SYMMEM_CU_CHECK(d.cuDeviceGetAttribute(&fdok, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, cudev));
  if (!vmm) problem = "GPU " + std::to_string(dev) + " lacks CUDA virtual memory management";
  else if (!fdok) problem = "GPU " + std::to_string(dev) + " cannot export memory as POSIX file descriptors";
  char bus[32] = {0};
  SYMMEM_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), dev));
  auto buses = team_.all_gather(bus, "Heap: device exchange");
  st.peer_devices.assign(team_.size(), -1);
  for (int j = 0; j < team_.size(); ++j) {
    int idx = -1;
    if (cudaDeviceGetByPCIBusId(&idx, buses[j].c_str()) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;  // not visible here: cuMemSetAccess will tell if it cannot be reached
    }
    st.peer_devices[j] = idx;
    int can = 1;
    if (idx != dev) SYMMEM_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, dev, idx));
    if (!can && problem.empty())
      problem = "GPU " + std::to_string(dev) + " has no peer access to GPU " + std::to_string(idx) + " of rank " +
                std::to_string(team_.global_rank(j)) + " (no NVLink/PCIe P2P path): use NCCL for this pair";
  }
  auto problems = team_.all_gather(problem, "Heap: capability check");
  std::string msg = join_problems(problems, team_);
  if (!msg.empty()) fail<Unsupported>("Heap cannot be built: " + msg);

  CUmemAllocationProp prop = alloc_prop(dev);
  SYMMEM_CU_CHECK(d.cuMemGetAllocationGranularity(&st.granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  st.granularity = detail::round_up(std::max<size_t>(st.granularity, detail::kBlockAlign), detail::kBlockAlign);

  // A name for this heap's sockets that no other job on the host uses: member 0's random id.
  std::random_device rd;
  std::string id = std::to_string((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(getpid()));
  auto ids = team_.all_gather(id, "Heap: id exchange");
  st.fds = std::make_unique<detail::FdExchange>("symmem-" + ids[0], team_.rank(), team_.size());
  team_.barrier("Heap: sockets bound");

  // The host-shared regions: each member makes its own and maps everyone's.
  int fd = memfd_create("symmem-heap", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, sizeof(shared::Region)) != 0)
    fail<Error>(std::string("Heap: memfd_create/ftruncate for the host-shared region failed: ") + std::strerror(errno));
  std::vector<int> fds = detail::exchange_fd(st, fd);
  fds[team_.rank()] = fd;
  st.regions.assign(team_.size(), nullptr);
  std::string mstatus;
  for (int j = 0; j < team_.size(); ++j) {
    void* p = mmap(nullptr, sizeof(shared::Region), j == team_.rank() ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fds[j], 0);
    close(fds[j]);
    if (p == MAP_FAILED) { mstatus = std::string("mapping rank ") + std::to_string(team_.global_rank(j)) + "'s host region failed: " + std::strerror(errno); continue; }
    st.regions[j] = static_cast<shared::Region*>(p);
  }
  auto mstatuses = team_.all_gather(mstatus, "Heap: host regions");
  msg = join_problems(mstatuses, team_);
  if (!msg.empty()) fail<Error>("Heap cannot be built: " + msg);
  if (team_.rank() == 0) {
    st.book = std::make_unique<detail::SpaceBook>(ctx_->settings().heap_chunk_bytes, st.granularity, detail::kBlockAlign);
    for (int s = shared::kMaxLive - 1; s >= 0; --s) st.free_slots.push_back(s);
  }
}

Heap::~Heap() {
  if (!st_ || st_->arenas.empty()) return;
  detail::DeviceGuard device(ctx_->device(), std::nothrow);  // (a garbage collector's thread may run it)
  try {
    cudaDeviceSynchronize();
    team_.barrier("~Heap");  // no member still reads or writes this one's memory
  } catch (...) {
    // A peer is gone: unmap anyway; what it mapped of ours dies with it.
  }
  abandon();
}

// Maps a new arena of `size` bytes on every member (collective; errors raised on every rank).
static std::unique_ptr<detail::Arena> map_arena(Context& ctx, const Team& team, HeapState& st, size_t size, const std::string& what) {
  const detail::Driver& d = driver();
  const int dev = ctx.device(), me = team.rank(), n = team.size();
  auto a = std::make_unique<detail::Arena>();
  a->size = size;
  a->handles.assign(n, 0);
  a->bases.assign(n, 0);
  a->mapped.assign(n, 0);

  // Create locally; every rank learns whether every rank succeeded before anyone goes on.
  CUmemAllocationProp prop = alloc_prop(dev);
  int fd = -1;
  std::string status;
  CUresult rc = d.cuMemCreate(&a->handles[me], size, &prop, 0);
  if (rc == CUDA_SUCCESS) {
    rc = d.cuMemExportToShareableHandle(&fd, a->handles[me], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (rc != CUDA_SUCCESS) status = "cuMemExportToShareableHandle failed (" + std::to_string(rc) + ")";
  } else {
    a->handles[me] = 0;
    status = rc == CUDA_ERROR_OUT_OF_MEMORY ? "out of device memory for " + std::to_string(size) + " bytes on GPU " + std::to_string(dev)
                                            : "cuMemCreate failed (" + std::to_string(rc) + ")";
  }
  auto statuses = team.all_gather(status, what + ": create");
  std::string msg = join_problems(statuses, team);
  if (!msg.empty()) {
    if (fd >= 0) close(fd);
    fail<CudaError>(what + " failed: " + msg);
  }
  std::vector<int> fds = detail::exchange_fd(st, fd);
  close(fd);

  // Map every member's memory here, with read/write access for this rank's GPU.
  status.clear();
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (int j = 0; j < n && status.empty(); ++j) {
    CUresult r = CUDA_SUCCESS;
    if (j != me) {
      r = d.cuMemImportFromShareableHandle(&a->handles[j], reinterpret_cast<void*>(static_cast<uintptr_t>(fds[j])),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      close(fds[j]);
      fds[j] = -1;
      if (r != CUDA_SUCCESS) { a->handles[j] = 0; status = "importing rank " + std::to_string(team.global_rank(j)) + "'s memory failed (" + std::to_string(r) + ")"; break; }
    }
    r = d.cuMemAddressReserve(&a->bases[j], size, st.granularity, 0, 0);
    if (r == CUDA_SUCCESS) {
      r = d.cuMemMap(a->bases[j], size, 0, a->handles[j], 0);
      a->mapped[j] = r == CUDA_SUCCESS;
    } else {
      a->bases[j] = 0;
    }
    if (r == CUDA_SUCCESS) r = d.cuMemSetAccess(a->bases[j], size, &access, 1);
    if (r != CUDA_SUCCESS) {
      status = "mapping rank " + std::to_string(team.global_rank(j)) + "'s memory for GPU " + std::to_string(dev) + " failed (" + std::to_string(r) + ")";
      break;
    }
  }
  for (int f : fds)
    if (f >= 0) close(f);
  statuses = team.all_gather(status, what + ": map");
  msg = join_problems(statuses, team);
  if (!msg.empty()) fail<CudaError>(what + " failed: " + msg);  // ~Arena unmaps what was mapped
  SYMMEM_LOG(kInfo, "heap on team '" + team.name() + "' mapped an arena of " + std::to_string(size) + " bytes per rank");
  return a;
}

// Marks this rank's releases whose GPU work has finished in its host-shared region.
static void settle(HeapState& st, int me) {
  auto& p = st.pending;
  for (size_t i = 0; i < p.size();) {
    if (p[i].done) {
      cudaError_t e = cudaEventQuery(p[i].done);
      if (e == cudaErrorNotReady) { ++i; continue; }
      (void)cudaGetLastError();  // an error here is a sticky context error: other calls report it
      cudaEventDestroy(p[i].done);
    }
    st.regions[me]->released[p[i].a->slot].store(p[i].a->id, std::memory_order_release);
    if (me == 0) st.released_here.push_back(p[i].a->slot);
    p[i] = std::move(p.back());
    p.pop_back();
  }
}

SymmetricBuffer Heap::alloc(size_t bytes) {
  detail::CallScope call("symmem Heap::alloc", ctx_->device());
  require(st_ != nullptr, "Heap::alloc: the heap was moved from");
  // A bad size is refused by member 0's decision below, on every rank at once (refused here, on its
  // rank alone, it left the others waiting for that rank's call until the bound).
  const size_t kMaxBytes = size_t(1) << 50;
  HeapState& st = *st_;
  const int me = team_.rank(), n = team_.size();
  const std::string what = "Heap::alloc(" + std::to_string(bytes) + ")";
  const uint64_t id = ++st.next_id;
  settle(st, me);

  // Request; member 0 decides; everyone reads the decision.
  shared::Region& own = *st.regions[me];
  own.request_bytes[id % shared::kRing].store(bytes, std::memory_order_relaxed);
  own.request_seq.store(id, std::memory_order_release);
  shared::Decision& dec = st.regions[0]->ring[id % shared::kRing];
  if (me == 0) {
    std::vector<size_t> sizes(n);
    for (int j = 0; j < n; ++j) {
      shared::Region& r = *st.regions[j];
      detail::wait_shared([&] { return r.request_seq.load(std::memory_order_acquire) >= id; }, st.timeout_ms,
                          what + " on rank " + std::to_string(ctx_->rank()) + ": waiting for rank " + std::to_string(team_.global_rank(j)) + "'s call");
      sizes[j] = r.request_bytes[id % shared::kRing].load(std::memory_order_relaxed);
    }
    for (int j = 0; j < n; ++j)  // the ring slot is free once every member has read the decision kRing back
      detail::wait_shared([&] { return id <= shared::kRing || st.regions[j]->consumed_seq.load(std::memory_order_acquire) >= id - shared::kRing; },
                          st.timeout_ms, what + ": waiting for rank " + std::to_string(team_.global_rank(j)) + " to read an earlier decision");
    // Reclaim what every member has released.
    for (size_t i = 0; i < st.released_here.size();) {
      const int slot = st.released_here[i];
      const auto& b = st.blocks.at(slot);
      bool all = true;
      for (int j = 0; j < n && all; ++j) all = st.regions[j]->released[slot].load(std::memory_order_acquire) == b.id;
      if (!all) { ++i; continue; }
      st.book->release(b.arena, b.offset, b.bytes);
      st.blocks.erase(slot);
      st.free_slots.push_back(slot);
      st.released_here[i] = st.released_here.back();
      st.released_here.pop_back();
    }
    dec.kind = shared::kOk;
    dec.new_arena_bytes = 0;
    dec.drop_arena = st.book->droppable();
    if (dec.drop_arena >= 0) st.book->drop(static_cast<int>(dec.drop_arena));
    if (!detail::check_same_size(sizes, team_.global_ranks()).empty()) {
      dec.kind = shared::kSizeMismatch;
    } else if (bytes == 0 || bytes > kMaxBytes) {
      dec.kind = shared::kBadSize;
    } else if (st.free_slots.empty()) {
      dec.kind = shared::kTooManyBlocks;
    } else {
      const size_t pad_off = detail::checked_round_up(bytes, 256, what.c_str());
      const size_t block = detail::checked_round_up(pad_off + pad::kBytes + 2 * sizeof(void*) * n, detail::kBlockAlign, what.c_str());
      auto place = st.book->place(block);
      const int slot = st.free_slots.back();
      st.free_slots.pop_back();
      st.blocks[slot] = HeapState::Block{id, place.arena, place.offset, block};
      dec.slot = slot;
      dec.arena = place.arena;
      dec.offset = place.offset;
      dec.new_arena_bytes = place.new_arena_bytes;
    }
    dec.seq.store(id, std::memory_order_release);
  } else {
    detail::wait_shared([&] { return dec.seq.load(std::memory_order_acquire) == id; }, st.timeout_ms,
                        what + " on rank " + std::to_string(ctx_->rank()) + ": waiting for rank " + std::to_string(team_.global_rank(0)) +
                            "'s decision (member 0 places every buffer)");
  }
  struct {
    uint64_t kind, slot, arena, offset, new_arena_bytes;
    int64_t drop_arena;
  } const d{dec.kind, dec.slot, dec.arena, dec.offset, dec.new_arena_bytes, dec.drop_arena};
  std::vector<size_t> sizes(n);
  if (d.kind == shared::kSizeMismatch)  // read before this rank lets member 0 reuse the ring slot
    for (int j = 0; j < n; ++j) sizes[j] = st.regions[j]->request_bytes[id % shared::kRing].load(std::memory_order_relaxed);
  own.consumed_seq.store(id, std::memory_order_release);

  if (d.drop_arena >= 0 && static_cast<size_t>(d.drop_arena) < st.arenas.size()) st.arenas[d.drop_arena].reset();
  if (d.kind == shared::kSizeMismatch) fail(what + ": " + detail::check_same_size(sizes, team_.global_ranks()));
  if (d.kind == shared::kBadSize) {
    require(bytes > 0, "Heap::alloc: bytes is 0; ask for at least 1 byte");
    fail("Heap::alloc: bytes=" + std::to_string(bytes) + " is past any GPU's memory (1 PiB)");
  }
  if (d.kind == shared::kTooManyBlocks)
    fail(what + ": " + std::to_string(shared::kMaxLive) + " buffers of this heap are live; free some first");
  if (d.new_arena_bytes) {
    try {
      if (st.arenas.size() <= d.arena) st.arenas.resize(d.arena + 1);
      st.arenas[d.arena] = map_arena(*ctx_, team_, st, d.new_arena_bytes, what);
    } catch (...) {
      if (me == 0) {
        st.blocks.erase(static_cast<int>(d.slot));
        st.free_slots.push_back(static_cast<int>(d.slot));
        st.book->forget_arena(static_cast<int>(d.arena));
      }
      throw;
    }
  }

  // The buffer on this member: pointers, pad zeroed, device tables.
  const detail::Arena& ar = *st.arenas.at(d.arena);
  auto a = std::make_shared<Allocation>();
  a->bytes = bytes;
  a->rank = me;
  a->nranks = n;
  a->device = ctx_->device();
  a->id = id;
  a->slot = static_cast<int>(d.slot);
  a->arena = static_cast<int>(d.arena);
  a->offset = d.offset;
  a->pad_offset = detail::round_up(bytes, 256);
  a->block = detail::round_up(a->pad_offset + pad::kBytes + 2 * sizeof(void*) * n, detail::kBlockAlign);
  a->peers.resize(n);
  a->signals.resize(n);
  for (int j = 0; j < n; ++j) {
    a->peers[j] = reinterpret_cast<void*>(ar.bases[j] + d.offset);
    a->signals[j] = reinterpret_cast<uint64_t*>(ar.bases[j] + d.offset + a->pad_offset);
  }
  char* tables = static_cast<char*>(a->peers[me]) + a->pad_offset + pad::kBytes;
  std::vector<void*> host_tables(2 * n);
  for (int j = 0; j < n; ++j) host_tables[j] = a->peers[j], host_tables[n + j] = a->signals[j];
  std::string status;
  cudaError_t e = cudaMemset(a->signals[me], 0, pad::kBytes);
  if (e == cudaSuccess) e = cudaMemcpy(tables, host_tables.data(), sizeof(void*) * 2 * n, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    status = std::string("setting up the buffer failed: ") + cudaGetErrorString(e);
  }
  // (device::put chooses its vector width from this rank's address: every peer's must be congruent.)
  for (int j = 0; j < n && status.empty(); ++j)
    if ((reinterpret_cast<uintptr_t>(a->peers[j]) - reinterpret_cast<uintptr_t>(a->peers[me])) % detail::kBlockAlign != 0)
      status = "rank " + std::to_string(team_.global_rank(j)) + "'s copy is mapped at an address not congruent to this rank's mod " +
               std::to_string(detail::kBlockAlign) + " (an internal error of the heap; please report it)";
  // Every pad is zero before any member may signal into it: a host-shared barrier.
  own.ready_seq.store(id, std::memory_order_release);
  for (int j = 0; j < n; ++j)
    detail::wait_shared([&] { return st.regions[j]->ready_seq.load(std::memory_order_acquire) >= id; }, st.timeout_ms,
                        what + ": waiting for rank " + std::to_string(team_.global_rank(j)) + " to zero its signal pad");
  if (!status.empty()) {
    st.pending.push_back(detail::Pending{a, nullptr});
    fail<CudaError>(what + " failed on rank " + std::to_string(ctx_->rank()) + ": " + status);
  }
  a->handle = DeviceHandle{a->peers[me], reinterpret_cast<void* const*>(tables), reinterpret_cast<uint64_t* const*>(tables + sizeof(void*) * n),
                           a->signals[me], bytes, me, n, ctx_->rank(), ctx_->device_error_record()};
  st.live.emplace(reinterpret_cast<uintptr_t>(a->peers[me]), a);
  SYMMEM_LOG(kTrace, "allocated " + std::to_string(bytes) + " symmetric bytes on team '" + team_.name() + "' (arena " +
                         std::to_string(a->arena) + ", offset " + std::to_string(a->offset) + ", " + std::to_string(st.live.size()) + " buffers live)");
  return SymmetricBuffer(a);
}

static std::shared_ptr<Allocation> take_live(HeapState& st, SymmetricBuffer& buf, const std::shared_ptr<Allocation>& a, const char* what) {
  require(a != nullptr, what, ": the buffer is empty");
  auto it = st.live.find(reinterpret_cast<uintptr_t>(a->peers[a->rank]));
  require(it != st.live.end() && it->second == a, what, ": the buffer is not live in this heap (freed twice, or from another heap)");
  st.live.erase(it);
  a->released = true;
  (void)buf;
  return a;
}

void Heap::free(SymmetricBuffer& buf) {
  detail::CallScope call("symmem Heap::free", ctx_->device());
  require(st_ != nullptr, "Heap::free: the heap was moved from");
  auto a = take_live(*st_, buf, buf.a_, "Heap::free");
  buf.a_.reset();
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  st_->pending.push_back(detail::Pending{a, nullptr});
  settle(*st_, team_.rank());
}

void Heap::free_async(SymmetricBuffer& buf, cudaStream_t stream) {
  detail::DeviceGuard device(ctx_->device());  // the event is made and recorded on this GPU's stream
  require(st_ != nullptr, "Heap::free_async: the heap was moved from");
  auto a = take_live(*st_, buf, buf.a_, "Heap::free_async");
  buf.a_.reset();
  detail::Pending p{a, nullptr};
  if (cudaEventCreateWithFlags(&p.done, cudaEventDisableTiming) != cudaSuccess || cudaEventRecord(p.done, stream) != cudaSuccess) {
    // No event (the context is going away): fall back to waiting for the device.
    (void)cudaGetLastError();
    if (p.done) cudaEventDestroy(p.done);
    p.done = nullptr;
    (void)cudaDeviceSynchronize();
    (void)cudaGetLastError();
  }
  st_->pending.push_back(std::move(p));
}

void Heap::abandon() {
  if (!st_) return;
  detail::DeviceGuard device(ctx_->device(), std::nothrow);  // (from destructors)
  (void)cudaDeviceSynchronize();  // every symmem wait has been told to give up; NCCL was aborted
  (void)cudaGetLastError();
  for (auto& kv : st_->live) kv.second->released = true;
  st_->live.clear();
  for (auto& p : st_->pending)
    if (p.done) cudaEventDestroy(p.done);
  st_->pending.clear();
  st_->arenas.clear();
}

SymmetricBuffer Heap::find(const void* p, size_t n) const {
  if (!st_ || st_->live.empty()) return SymmetricBuffer();
  auto it = st_->live.upper_bound(reinterpret_cast<uintptr_t>(p));
  if (it == st_->live.begin()) return SymmetricBuffer();
  SymmetricBuffer b(std::prev(it)->second);
  return b.contains(p, n) ? b : SymmetricBuffer();
}

size_t Heap::mapped_bytes() const {
  size_t total = 0;
  if (st_)
    for (auto& a : st_->arenas)
      if (a) total += a->size;
  return total;
}

}  // namespace symmem
