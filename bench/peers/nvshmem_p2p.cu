// NVSHMEM's one-sided primitives between two GPUs, timed the way `symmem-bench p2p` times symmem's,
// so that the two programs' JSON compare row by row (bench/peers/compare_p2p.py). A peer program:
// never part of symmem's build; tools/peers.sh builds it on the GPU machine against the NVSHMEM
// that PyTorch's wheels bring (3.4 there) and runs it beside symmem-bench p2p in one call:
//   tools/peers.sh nvshmem [-b 8] [-e 2M]
// Ranks: RANK / WORLD_SIZE (2) / LOCAL_RANK from the launcher (symmem-run, torchrun), NVSHMEM joined
// through a unique id that rank 0 writes to --uid-file (a fresh path a run).
// Timing (symmem-bench's Harness::time_graph): `ops` calls captured in a CUDA graph, 3 untimed
// replays, then 15 replays each after a ~50 us spin and a two-rank barrier on the GPU, events
// around the replay; the median a call, the larger of the two ranks' medians.
// What is measured, at each size (one row of JSON each, "nvshmem_us" and GB/s):
//   p2p_latency    one-way latency, ping-pong / 2, of nvshmemx_putmem_signal_{warp,block} (a warp up
//                  to 1 KiB, else a block of 512) with nvshmem_signal_wait_until, up to 1 MiB; from
//                  32 KiB also from a grid (16 KiB or more a block, at most 32: block b puts its
//                  slice adding 1 to the signal), the faster kept (one_block_us, grid_us); at the
//                  first size also a signal alone (nvshmemx_signal_op) and the round trip of
//                  nvshmem_uint64_atomic_fetch_add.
//   p2p_put / p2p_get / p2p_put_bidir, algo "sm": nvshmemx_{put,get}mem_block from a grid of
//                  512-thread blocks, as many as symmem's plain SM copy takes (a block per 32 KiB,
//                  up to one an SM); algo "copy_engine": nvshmemx_{put,get}mem_on_stream (for
//                  peers reached over NVLink, a cudaMemcpyAsync on the caller's stream).
// Every destination is poisoned before its measurement and checked after against the sender's
// pattern (bench/pattern.cuh, the same bytes symmem-bench moves): "wrong" counts bad bytes.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../cuda_check.hpp"
#include "../pattern.cuh"

namespace {

using symmem::bench::count_wrong_kernel;
using symmem::bench::fill_pattern_kernel;

// Signal words (symmetric, zeroed at start). Each ping-pong form has its own, and a local word
// (kEpoch + form) that carries the rounds completed across graph replays.
enum : int { kSigPing = 0, kSigGrid = 1, kSigLineUp = 2, kWords = 8 };

__device__ inline uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__global__ void spin_kernel(uint64_t ns) {
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}

// The two ranks meet on the GPU: a signal to the peer with this line-up's number, then a wait for
// the peer's (both ranks run the same line-ups in the same order).
__global__ void line_up_kernel(uint64_t* sig, uint64_t epoch, int peer) {
  nvshmemx_signal_op(sig + kSigLineUp, epoch, NVSHMEM_SIGNAL_SET, peer);
  nvshmem_signal_wait_until(sig + kSigLineUp, NVSHMEM_CMP_GE, epoch);
}

// Mode 0: put with signal; 1: the signal alone.
template <int Mode>
__global__ void pingpong_kernel(char* dst, const char* src, size_t n, uint64_t* sig, uint64_t* rounds, int peer, bool initiator,
                                int iters) {
  const uint64_t base = *rounds;
  const bool warp = Mode == 1 || n <= 1024;
  if (warp && threadIdx.x >= 32) return;
  auto send = [&](uint64_t v) {
    if (Mode == 1) {
      if (threadIdx.x == 0) nvshmemx_signal_op(sig + kSigPing, v, NVSHMEM_SIGNAL_SET, peer);
    } else if (warp) {
      nvshmemx_putmem_signal_warp(dst, src, n, sig + kSigPing, v, NVSHMEM_SIGNAL_SET, peer);
    } else {
      nvshmemx_putmem_signal_block(dst, src, n, sig + kSigPing, v, NVSHMEM_SIGNAL_SET, peer);
    }
  };
  auto recv = [&](uint64_t v) {
    if (threadIdx.x == 0) nvshmem_signal_wait_until(sig + kSigPing, NVSHMEM_CMP_GE, v);
    if (warp) __syncwarp();
    else __syncthreads();
  };
  for (int i = 1; i <= iters; ++i) {
    const uint64_t v = base + i;
    if (!initiator) recv(v);
    send(v);
    if (initiator) recv(v);
  }
  if (threadIdx.x == 0) *rounds = base + iters;
}

// The ping-pong from a grid: block b puts its 16-byte-aligned slice with a signal add of 1, and a
// round is received once the signal has grown by gridDim.x. Block 0 writes the total for the next
// launch after its last wait, which needs the peer to have received a round from every block of
// this grid (iters >= 2): every block has read the old total by then.
__global__ void pingpong_grid_kernel(char* dst, const char* src, size_t n, uint64_t* sig, uint64_t* total, int peer, bool initiator,
                                     int iters) {
  const uint64_t base = *total;
  const size_t words = n / 16, g = gridDim.x, b = blockIdx.x;
  const size_t lo = words * b / g * 16, hi = b + 1 == g ? n : words * (b + 1) / g * 16;
  auto recv = [&](int i) {
    if (threadIdx.x == 0) nvshmem_signal_wait_until(sig + kSigGrid, NVSHMEM_CMP_GE, base + static_cast<uint64_t>(i) * g);
    __syncthreads();
  };
  for (int i = 1; i <= iters; ++i) {
    if (!initiator) recv(i);
    nvshmemx_putmem_signal_block(dst + lo, src + lo, hi - lo, sig + kSigGrid, 1, NVSHMEM_SIGNAL_ADD, peer);
    if (initiator) recv(i);
  }
  if (b == 0 && threadIdx.x == 0) *total = base + static_cast<uint64_t>(iters) * g;
}

// A remote atomic's round trip: each add waits for the previous one's old value.
__global__ void fetch_add_kernel(uint64_t* word, int peer, int iters, uint64_t* sink) {
  uint64_t v = 1;
  for (int i = 0; i < iters; ++i) v = nvshmem_uint64_atomic_fetch_add(word, (v & 1u) + 1u, peer);
  *sink = v;
}

// Block b moves its 16-byte-aligned slice of the n bytes (put: local src -> peer's dst; get: peer's
// src -> local dst).
template <bool Put>
__global__ void grid_copy_kernel(char* dst, const char* src, size_t n, int peer) {
  const size_t words = n / 16, g = gridDim.x, b = blockIdx.x;
  const size_t lo = words * b / g * 16, hi = b + 1 == g ? n : words * (b + 1) / g * 16;
  if (hi <= lo) return;
  if (Put) nvshmemx_putmem_block(dst + lo, src + lo, hi - lo, peer);
  else nvshmemx_getmem_block(dst + lo, src + lo, hi - lo, peer);
}

size_t parse_size(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  const std::string u = end ? end : "";
  if (u == "K" || u == "k") v *= 1024;
  else if (u == "M" || u == "m") v *= 1024 * 1024;
  else if (u == "G" || u == "g") v *= 1024.0 * 1024 * 1024;
  else if (!u.empty()) {
    std::fprintf(stderr, "nvshmem-p2p: bad size %s (a number with K, M or G)\n", s.c_str());
    std::exit(2);
  }
  return static_cast<size_t>(v);
}

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : dflt;
}

struct Row {
  std::string op, algo;
  size_t bytes;
  double us;
  long wrong;
  std::vector<std::pair<std::string, double>> extra;
};

class Bench {
 public:
  Bench(int me, int peer, uint64_t* sig) : me_(me), peer_(peer), sig_(sig) {
    CK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
    CK(cudaEventCreate(&a_));
    CK(cudaEventCreate(&b_));
    exch_ = static_cast<double*>(nvshmem_malloc(sizeof(double)));
    if (!exch_) {
      std::fprintf(stderr, "nvshmem-p2p: nvshmem_malloc failed\n");
      std::exit(1);
    }
  }
  cudaStream_t stream() const { return s_; }

  // `ops` calls of f in one graph; us a call, the larger of the two ranks' medians (-1 where the
  // calls cannot be captured).
  double time_graph(const std::function<void(cudaStream_t)>& f, int ops) {
    cudaGraph_t g = nullptr;
    cudaGraphExec_t e = nullptr;
    CK(cudaStreamBeginCapture(s_, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < ops; ++i) f(s_);
    const cudaError_t rc = cudaStreamEndCapture(s_, &g);
    double us = -1;
    if (rc != cudaSuccess || cudaGraphInstantiate(&e, g, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      if (me_ == 0) std::fprintf(stderr, "nvshmem-p2p: a call could not be captured in a graph (%s)\n", cudaGetErrorString(rc));
    } else {
      for (int w = 0; w < 3; ++w) CK(cudaGraphLaunch(e, s_));
      CK(cudaStreamSynchronize(s_));
      std::vector<float> ms;
      for (int r = 0; r < 15; ++r) {
        line_up();
        CK(cudaEventRecord(a_, s_));
        CK(cudaGraphLaunch(e, s_));
        CK(cudaEventRecord(b_, s_));
        CK(cudaStreamSynchronize(s_));
        float t = 0;
        CK(cudaEventElapsedTime(&t, a_, b_));
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      us = 1000.0 * ms[ms.size() / 2] / ops;
    }
    if (e) cudaGraphExecDestroy(e);
    if (g) cudaGraphDestroy(g);
    return max_over_ranks(us);
  }

  // The larger of the two ranks' values (-1 where either rank has -1), and their sum.
  double max_over_ranks(double v) {
    const double other = exchange(v);
    return v < 0 || other < 0 ? -1 : std::max(v, other);
  }
  long sum_over_ranks(long v) { return v + static_cast<long>(exchange(static_cast<double>(v))); }

 private:
  // The peer's v, through this rank's symmetric word: written, a barrier, the peer's read through
  // its mapping, a barrier (both have read before either writes again).
  double exchange(double v) {
    CK(cudaMemcpy(exch_, &v, sizeof(v), cudaMemcpyHostToDevice));
    nvshmem_barrier_all();
    double other = 0;
    CK(cudaMemcpy(&other, nvshmem_ptr(exch_, peer_), sizeof(other), cudaMemcpyDeviceToHost));
    nvshmem_barrier_all();
    return other;
  }
  void line_up() {
    spin_kernel<<<1, 1, 0, s_>>>(50000);
    line_up_kernel<<<1, 1, 0, s_>>>(sig_, ++epoch_, peer_);
  }
  int me_, peer_;
  uint64_t* sig_;
  uint64_t epoch_ = 0;
  double* exch_ = nullptr;
  cudaStream_t s_;
  cudaEvent_t a_, b_;
};

void write_json(const std::string& path, const std::vector<Row>& rows, const std::string& gpu, int version_major, int version_minor,
                int version_patch) {
  std::ofstream f(path);
  f << "{\n  \"suite\": \"p2p\",\n  \"peer\": \"nvshmem\",\n  \"nvshmem_version\": \"" << version_major << "." << version_minor << "."
    << version_patch << "\",\n  \"device\": \"" << gpu << "\",\n  \"device_kind\": \"" << (std::getenv("SYMMEM_KIND") ? std::getenv("SYMMEM_KIND") : "")
    << "\",\n  \"timing\": \"CUDA-graph replays timed with events, median of 15, maximum over ranks (as symmem-bench)\",\n  \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    f << "    {\"op\": \"" << r.op << "\", \"algo\": \"" << r.algo << "\", \"bytes\": " << r.bytes << ", \"nvshmem_us\": ";
    if (r.us > 0) f << r.us; else f << "null";
    f << ", \"wrong\": " << r.wrong;
    for (auto& kv : r.extra) {
      f << ", \"" << kv.first << "\": ";
      if (kv.second >= 0) f << kv.second; else f << "null";
    }
    f << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  size_t min_bytes = 8, max_bytes = 2 << 20;
  std::string uid_file, json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nvshmem-p2p: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-b") min_bytes = parse_size(next());
    else if (a == "-e") max_bytes = parse_size(next());
    else if (a == "--uid-file") uid_file = next();
    else if (a == "--json") json = next();
    else {
      std::fprintf(stderr, "usage: nvshmem-p2p --uid-file PATH [-b MIN] [-e MAX] [--json PATH]\n");
      return 2;
    }
  }
  const int rank = env_int("RANK", -1), world = env_int("WORLD_SIZE", -1), local = env_int("LOCAL_RANK", rank);
  if (rank < 0 || world != 2 || uid_file.empty() || min_bytes < 8 || min_bytes > max_bytes) {
    std::fprintf(stderr, "nvshmem-p2p: run as 2 ranks (RANK, WORLD_SIZE=2, LOCAL_RANK set by symmem-run or torchrun) with"
                         " --uid-file PATH, 8 <= -b <= -e\n");
    return 2;
  }
  int gpus = 0;
  CK(cudaGetDeviceCount(&gpus));
  if (gpus < 1) {
    std::fprintf(stderr, "nvshmem-p2p: no GPU\n");
    return 3;
  }
  CK(cudaSetDevice(local % gpus));

  // The unique id: rank 0 writes it (to a temporary name, then renamed), rank 1 waits for it.
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (rank == 0) {
    nvshmemx_get_uniqueid(&id);
    const std::string tmp = uid_file + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(&id), sizeof(id));
    std::rename(tmp.c_str(), uid_file.c_str());
  } else {
    bool got = false;
    for (int t = 0; t < 6000 && !got; ++t) {  // up to 60 s
      std::ifstream f(uid_file, std::ios::binary);
      got = f && f.read(reinterpret_cast<char*>(&id), sizeof(id)) && f.gcount() == static_cast<std::streamsize>(sizeof(id));
      if (!got) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!got) {
      std::fprintf(stderr, "nvshmem-p2p: rank %d: no unique id in %s after 60 s (did rank 0 start?)\n", rank, uid_file.c_str());
      return 1;
    }
  }
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  nvshmemx_set_attr_uniqueid_args(rank, world, &id, &attr);
  if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) {
    std::fprintf(stderr, "nvshmem-p2p: rank %d: nvshmemx_init_attr failed\n", rank);
    return 1;
  }
  const int me = nvshmem_my_pe(), peer = 1 - me;
  int major = 0, minor = 0, patch = 0;
  nvshmemx_vendor_get_version_info(&major, &minor, &patch);
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, local % gpus));
  const int sms = prop.multiProcessorCount;

  const size_t cap = max_bytes;
  char* dst = static_cast<char*>(nvshmem_malloc(cap));
  char* src = static_cast<char*>(nvshmem_malloc(cap));  // (symmetric: gets read the peer's)
  char* out = static_cast<char*>(nvshmem_malloc(cap));
  uint64_t* sig = static_cast<uint64_t*>(nvshmem_malloc(kWords * sizeof(uint64_t)));
  uint64_t* word = static_cast<uint64_t*>(nvshmem_malloc(sizeof(uint64_t)));
  if (!dst || !src || !out || !sig || !word) {
    std::fprintf(stderr, "nvshmem-p2p: rank %d: nvshmem_malloc of 3 x %zu bytes failed (NVSHMEM_SYMMETRIC_SIZE)\n", me, cap);
    return 1;
  }
  uint64_t *rounds = nullptr, *sink = nullptr;
  unsigned long long* bad = nullptr;
  CK(cudaMalloc(&rounds, 4 * sizeof(uint64_t)));
  CK(cudaMalloc(&sink, sizeof(uint64_t)));
  CK(cudaMalloc(&bad, sizeof(unsigned long long)));
  CK(cudaMemset(rounds, 0, 4 * sizeof(uint64_t)));
  CK(cudaMemset(sig, 0, kWords * sizeof(uint64_t)));
  CK(cudaMemset(word, 0, sizeof(uint64_t)));
  fill_pattern_kernel<<<264, 512>>>(reinterpret_cast<uint8_t*>(src), cap, me);
  CK(cudaDeviceSynchronize());
  nvshmem_barrier_all();

  Bench h(me, peer, sig);
  cudaStream_t s = h.stream();
  auto poison = [&](void* p, size_t n) {
    CK(cudaMemset(p, 0xCD, n));
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
  };
  auto count_wrong = [&](const void* p, size_t n) -> long {
    CK(cudaMemset(bad, 0, sizeof(*bad)));
    count_wrong_kernel<<<264, 512>>>(static_cast<const uint8_t*>(p), n, peer, bad);
    unsigned long long host = 0;
    CK(cudaMemcpy(&host, bad, sizeof(host), cudaMemcpyDeviceToHost));
    return static_cast<long>(host);
  };
  auto grid_blocks = [&](size_t n) { return static_cast<int>(std::min<size_t>(sms, std::max<size_t>(1, (n + 32767) / 32768))); };

  std::vector<Row> rows;
  if (me == 0) {
    std::printf("# nvshmem-p2p: ranks 0 <-> 1, %s, NVSHMEM %d.%d.%d\n", prop.name, major, minor, patch);
    std::printf("%12s %9s | %8s %8s %8s %8s | %8s %8s | %6s\n", "size", "lat_put", "put_sm", "put_ce", "get_sm", "get_ce", "putsm_bi",
                "putce_bi", "#wrong");
  }
  for (size_t n = min_bytes; n <= max_bytes; n *= 2) {
    long wrong = 0;
    Row lat{"p2p_latency", "put_signal", n, -1, 0, {}};
    const int iters = n <= (64 << 10) ? 200 : 20;
    const bool initiator = me == 0;
    if (n <= (size_t(1) << 20)) {
      poison(dst, n);
      const double one = h.time_graph([&](cudaStream_t st) {
        pingpong_kernel<0><<<1, 512, 0, st>>>(dst, src, n, sig, rounds + 0, peer, initiator, iters);
      }, 1) / (2.0 * iters);
      lat.us = one;
      lat.extra.push_back({"one_block_us", one});
      const int grid = static_cast<int>(std::min<size_t>(32, std::max<size_t>(1, n / (size_t(16) << 10))));
      lat.extra.push_back({"grid_blocks", grid});
      if (grid > 1) {
        const double g_us = h.time_graph([&](cudaStream_t st) {
          pingpong_grid_kernel<<<grid, 512, 0, st>>>(dst, src, n, sig, rounds + 1, peer, initiator, iters);
        }, 1) / (2.0 * iters);
        lat.extra.push_back({"grid_us", g_us});
        if (g_us > 0 && (lat.us < 0 || g_us < lat.us)) lat.us = g_us;
      }
      wrong += count_wrong(dst, n);
      if (n == min_bytes) {
        const double sig_us = h.time_graph([&](cudaStream_t st) {
          pingpong_kernel<1><<<1, 32, 0, st>>>(dst, src, n, sig, rounds + 2, peer, initiator, iters);
        }, 1) / (2.0 * iters);
        const double amo_us = h.time_graph([&](cudaStream_t st) {
          if (me == 0) fetch_add_kernel<<<1, 1, 0, st>>>(word, peer, iters, sink);
        }, 1) / iters;
        lat.extra.push_back({"signal_only_us", sig_us});
        lat.extra.push_back({"atomic_fetch_add_us", amo_us});
        if (me == 0)
          std::printf("# latency variants at %zu B: put_signal %.2f us, signal only %.2f us; a remote atomic_fetch_add's round trip %.2f us\n",
                      n, lat.us, sig_us, amo_us);
      }
    }
    const int ops = n >= (size_t(256) << 20) ? 3 : n >= (size_t(16) << 20) ? 5 : 20;
    const int blocks = grid_blocks(n);
    auto put = [&](bool ce, bool bidir) {
      poison(dst, n);
      const double us = h.time_graph([&](cudaStream_t st) {
        if (me != 0 && !bidir) return;
        if (ce) nvshmemx_putmem_on_stream(dst, src, n, peer, st);
        else grid_copy_kernel<true><<<blocks, 512, 0, st>>>(dst, src, n, peer);
      }, ops);
      if (me == 1 || bidir) wrong += count_wrong(dst, n);
      return us;
    };
    auto get = [&](bool ce) {
      poison(out, n);
      const double us = h.time_graph([&](cudaStream_t st) {
        if (me != 0) return;
        if (ce) nvshmemx_getmem_on_stream(out, src, n, peer, st);
        else grid_copy_kernel<false><<<blocks, 512, 0, st>>>(out, src, n, peer);
      }, ops);
      if (me == 0) wrong += count_wrong(out, n);
      return us;
    };
    const double psm = put(false, false), pce = put(true, false), gsm = get(false), gce = get(true), psm_bi = put(false, true),
                 pce_bi = put(true, true);
    wrong = h.sum_over_ranks(wrong);
    if (lat.us > 0) {
      lat.wrong = wrong;
      rows.push_back(lat);
    }
    auto gbps = [&](double us) { return us > 0 ? n / us / 1000.0 : -1.0; };
    auto row = [&](const char* op, const char* algo, double us) {
      rows.push_back(Row{op, algo, n, us, wrong, {{"gbps", gbps(us)}}});
      if (std::strcmp(algo, "sm") == 0) rows.back().extra.push_back({"grid_blocks", blocks});
    };
    row("p2p_put", "sm", psm);
    row("p2p_put", "copy_engine", pce);
    row("p2p_get", "sm", gsm);
    row("p2p_get", "copy_engine", gce);
    row("p2p_put_bidir", "sm", psm_bi);
    row("p2p_put_bidir", "copy_engine", pce_bi);
    if (me == 0) {
      std::printf("%12zu %9.2f | %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f | %6ld\n", n, lat.us, gbps(psm), gbps(pce), gbps(gsm), gbps(gce),
                  gbps(psm_bi), gbps(pce_bi), wrong);
      std::fflush(stdout);
    }
  }
  if (me == 0 && !json.empty()) write_json(json, rows, prop.name, major, minor, patch);
  nvshmem_barrier_all();
  nvshmem_free(dst);
  nvshmem_free(src);
  nvshmem_free(out);
  nvshmem_free(sig);
  nvshmem_free(word);
  nvshmem_finalize();
  return 0;
}
