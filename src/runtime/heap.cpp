#include "symmem/heap.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "driver.hpp"
#include "log.hpp"
#include "fd_exchange.hpp"
#include "symmem/error.hpp"

namespace symmem {

namespace detail {

struct Allocation {
  size_t bytes = 0;        // as asked
  size_t pad_offset = 0;   // signal pad starts here
  size_t size = 0;         // mapped bytes per member (granularity multiple)
  int rank = 0, nranks = 0;
  std::vector<CUmemGenericAllocationHandle> handles;  // per member; 0 where not held
  std::vector<CUdeviceptr> bases;                      // per member reservation; 0 where none
  std::vector<char> mapped;                            // per member: cuMemMap succeeded
  std::vector<void*> peers;
  std::vector<uint64_t*> signals;
  void** peers_dev = nullptr;
  uint64_t** signals_dev = nullptr;
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
  require(peer >= 0 && peer < a.nranks, "peer=" + std::to_string(peer) + " is out of range [0, " + std::to_string(a.nranks) + ")");
  return a.peers[peer];
}
size_t SymmetricBuffer::bytes() const { return alive(a_).bytes; }
uint64_t* SymmetricBuffer::signal_pad() const { return alive(a_).signals[a_->rank]; }
uint64_t* SymmetricBuffer::peer_signal_pad(int peer) const {
  const Allocation& a = alive(a_);
  require(peer >= 0 && peer < a.nranks, "peer=" + std::to_string(peer) + " is out of range [0, " + std::to_string(a.nranks) + ")");
  return a.signals[peer];
}
int SymmetricBuffer::rank() const { return alive(a_).rank; }
int SymmetricBuffer::nranks() const { return alive(a_).nranks; }
const DeviceHandle& SymmetricBuffer::handle() const { return alive(a_).handle; }
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
    if (!all[i].empty()) msg += (msg.empty() ? "" : "; ") + std::string("rank ") + std::to_string(team.global_rank(static_cast<int>(i))) + ": " + all[i];
  return msg;
}

Heap::Heap(std::shared_ptr<Context> ctx) : Heap(ctx, ctx->world()) {}

Heap::Heap(std::shared_ptr<Context> ctx, Team team) : ctx_(std::move(ctx)), team_(std::move(team)) {
  require(ctx_ != nullptr, "Heap: context is null");
  require(team_.valid(), "Heap: the team is invalid");
  require(team_.size() <= pad::kMaxTeam, "Heap: team has " + std::to_string(team_.size()) + " ranks; a symmetric team holds at most " +
                                             std::to_string(pad::kMaxTeam));
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
  peer_devices_.assign(team_.size(), -1);
  for (int j = 0; j < team_.size(); ++j) {
    int idx = -1;
    if (cudaDeviceGetByPCIBusId(&idx, buses[j].c_str()) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;  // not visible here: cuMemSetAccess will tell if it cannot be reached
    }
    peer_devices_[j] = idx;
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
  SYMMEM_CU_CHECK(d.cuMemGetAllocationGranularity(&granularity_, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));

  // A name for this heap's sockets that no other job on the host uses: member 0's random id.
  std::random_device rd;
  std::string id = std::to_string((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(getpid()));
  auto ids = team_.all_gather(id, "Heap: id exchange");
  fds_ = std::make_unique<detail::FdExchange>("symmem-" + ids[0], team_.rank(), team_.size());
  team_.barrier("Heap: sockets bound");
}

Heap::~Heap() {
  if (live_.empty()) return;
  try {
    cudaDeviceSynchronize();
    team_.barrier("~Heap");
  } catch (...) {
    // A peer is gone: unmap anyway; what it mapped of ours dies with it.
  }
  for (auto& a : live_) release(*a);
}

SymmetricBuffer Heap::alloc(size_t bytes) {
  detail::NvtxRange range("symmem Heap::alloc");
  require(bytes > 0, "Heap::alloc: bytes is 0; ask for at least 1 byte");
  require(bytes <= (size_t(1) << 50), "Heap::alloc: bytes=" + std::to_string(bytes) + " is past any GPU's memory (1 PiB)");
  const std::string what = "Heap::alloc(" + std::to_string(bytes) + ")";
  auto sizes_s = team_.all_gather(std::to_string(bytes), what + ": size check");
  std::vector<size_t> sizes;
  for (auto& s : sizes_s) sizes.push_back(std::stoull(s));
  std::string mismatch = detail::check_same_size(sizes, team_.global_ranks());
  if (!mismatch.empty()) fail(what + ": " + mismatch);

  const detail::Driver& d = driver();
  const int dev = ctx_->device();
  auto a = std::make_shared<Allocation>();
  a->bytes = bytes;
  a->rank = team_.rank();
  a->nranks = team_.size();
  a->pad_offset = detail::checked_round_up(bytes, 256, what.c_str());
  a->size = detail::checked_round_up(detail::checked_add(a->pad_offset, pad::kBytes, what.c_str()), granularity_, what.c_str());
  a->handles.assign(a->nranks, 0);
  a->bases.assign(a->nranks, 0);
  a->mapped.assign(a->nranks, 0);
  a->peers.assign(a->nranks, nullptr);
  a->signals.assign(a->nranks, nullptr);

  // Create locally; every rank learns whether every rank succeeded before anyone goes on.
  CUmemAllocationProp prop = alloc_prop(dev);
  int fd = -1;
  std::string status;
  CUresult rc = d.cuMemCreate(&a->handles[a->rank], a->size, &prop, 0);
  if (rc == CUDA_SUCCESS) {
    rc = d.cuMemExportToShareableHandle(&fd, a->handles[a->rank], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (rc != CUDA_SUCCESS) status = "cuMemExportToShareableHandle failed (" + std::to_string(rc) + ")";
  } else {
    a->handles[a->rank] = 0;
    status = rc == CUDA_ERROR_OUT_OF_MEMORY ? "out of device memory for " + std::to_string(a->size) + " bytes on GPU " + std::to_string(dev)
                                            : "cuMemCreate failed (" + std::to_string(rc) + ")";
  }
  auto statuses = team_.all_gather(status, what + ": create");
  std::string msg = join_problems(statuses, team_);
  if (!msg.empty()) {
    if (fd >= 0) close(fd);
    if (a->handles[a->rank]) d.cuMemRelease(a->handles[a->rank]);
    fail<CudaError>(what + " failed: " + msg);
  }

  std::vector<int> fds;
  try {
    fds = fds_->exchange(fd, seq_++, ctx_->world().bootstrap().config().timeout_ms);
  } catch (...) {
    close(fd);
    d.cuMemRelease(a->handles[a->rank]);
    throw;
  }
  close(fd);

  // Map every member's memory here, with read/write access for this rank's GPU.
  status.clear();
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (int j = 0; j < a->nranks && status.empty(); ++j) {
    CUresult r = CUDA_SUCCESS;
    if (j != a->rank) {
      r = d.cuMemImportFromShareableHandle(&a->handles[j], reinterpret_cast<void*>(static_cast<uintptr_t>(fds[j])),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      close(fds[j]);
      fds[j] = -1;
      if (r != CUDA_SUCCESS) { a->handles[j] = 0; status = "importing rank " + std::to_string(team_.global_rank(j)) + "'s memory failed (" + std::to_string(r) + ")"; break; }
    }
    r = d.cuMemAddressReserve(&a->bases[j], a->size, granularity_, 0, 0);
    if (r == CUDA_SUCCESS) {
      r = d.cuMemMap(a->bases[j], a->size, 0, a->handles[j], 0);
      a->mapped[j] = r == CUDA_SUCCESS;
    } else {
      a->bases[j] = 0;
    }
    if (r == CUDA_SUCCESS) r = d.cuMemSetAccess(a->bases[j], a->size, &access, 1);
    if (r != CUDA_SUCCESS) {
      status = "mapping rank " + std::to_string(team_.global_rank(j)) + "'s memory for GPU " + std::to_string(dev) + " failed (" + std::to_string(r) + ")";
      break;
    }
    a->peers[j] = reinterpret_cast<void*>(a->bases[j]);
    a->signals[j] = reinterpret_cast<uint64_t*>(a->bases[j] + a->pad_offset);
  }
  for (int f : fds)
    if (f >= 0) close(f);
  if (status.empty()) {
    cudaError_t e = cudaMemset(a->signals[a->rank], 0, pad::kBytes);
    if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(&a->peers_dev), sizeof(void*) * a->nranks);
    if (e == cudaSuccess) e = cudaMalloc(reinterpret_cast<void**>(&a->signals_dev), sizeof(uint64_t*) * a->nranks);
    if (e == cudaSuccess) e = cudaMemcpy(a->peers_dev, a->peers.data(), sizeof(void*) * a->nranks, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(a->signals_dev, a->signals.data(), sizeof(uint64_t*) * a->nranks, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { (void)cudaGetLastError(); status = std::string("setting up the buffer failed: ") + cudaGetErrorString(e); }
  }
  // Every pad is zero before any member may signal into it: this exchange is the barrier.
  statuses = team_.all_gather(status, what + ": map");
  msg = join_problems(statuses, team_);
  if (!msg.empty()) {
    release(*a);
    fail<CudaError>(what + " failed: " + msg);
  }
  a->handle = DeviceHandle{a->peers[a->rank], a->peers_dev, a->signals_dev, a->signals[a->rank], bytes,
                           a->rank, a->nranks, ctx_->rank(), ctx_->device_error_record()};
  live_.push_back(a);
  SYMMEM_LOG(kInfo, "allocated " + std::to_string(bytes) + " symmetric bytes on team '" + team_.name() + "' (" +
                        std::to_string(a->size) + " mapped per rank, " + std::to_string(live_.size()) + " buffers live)");
  return SymmetricBuffer(a);
}

void Heap::free(SymmetricBuffer& buf) {
  detail::NvtxRange range("symmem Heap::free");
  require(buf.a_ != nullptr, "Heap::free: the buffer is empty");
  auto it = std::find(live_.begin(), live_.end(), buf.a_);
  require(it != live_.end(), "Heap::free: the buffer is not live in this heap (freed twice, or from another heap)");
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  team_.barrier("Heap::free");  // no member still reads or writes it
  release(**it);
  live_.erase(it);
  buf.a_.reset();
}

void Heap::abandon() {
  (void)cudaDeviceSynchronize();  // every symmem wait has been told to give up; NCCL was aborted
  (void)cudaGetLastError();
  for (auto& a : live_) release(*a);
  live_.clear();
}

SymmetricBuffer Heap::find(const void* p, size_t n) const {
  for (auto& a : live_) {
    SymmetricBuffer b(a);
    if (b.contains(p, n)) return b;
  }
  return SymmetricBuffer();
}

void Heap::release(Allocation& a) {
  if (a.released) return;
  const detail::Driver& d = driver();
  for (int j = 0; j < a.nranks; ++j) {
    if (a.bases[j]) {
      if (a.mapped[j]) d.cuMemUnmap(a.bases[j], a.size);
      d.cuMemAddressFree(a.bases[j], a.size);
    }
    if (a.handles[j]) d.cuMemRelease(a.handles[j]);
  }
  if (a.peers_dev) cudaFree(a.peers_dev);
  if (a.signals_dev) cudaFree(a.signals_dev);
  a.released = true;
}

}  // namespace symmem
