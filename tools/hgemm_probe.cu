// Checks and times symmem's Hopper GEMM (src/overlap/hopper_gemm.cu) against cuBLASLt on one GPU.
//   hgemm_probe M N K [cluster [group_m [reps [max_ctas [shards]]]]] [--json FILE]
// shards > 0: A in that many row shards, run from shard 1 down, shard 1 read from a separate copy
// (its rows in A poisoned), as the overlap runs it. --json appends one JSON line per run to FILE
// (the GPU, $COMMIT, the shape, both medians and the check).
// Prints the largest error against cuBLASLt's result and both medians (us, TFLOP/s).
// HGEMM_SUSTAIN=ops: time CUDA graphs of `ops` launches back to back instead of single launches,
// the two GEMMs alternated replay by replay (the GPU kept at its power cap, as in the overlap
// benchmark). HGEMM_CONSTANT=1: A and B all 0x3c3c instead of random (constant operands draw less
// power: session 31 found a GEMM 15-25% faster on them at the cap). HGEMM_WHICH=cublas|own: with
// HGEMM_SUSTAIN, only that GEMM's graph is replayed.
// HGEMM_RS=1 (with shards and HGEMM_SUSTAIN): matmul_reduce_scatter's own-GEMM forms looped back
// on one GPU, their partials landed beforehand (signals preset, nothing waits): cuBLASLt's whole
// GEMM, the fused form (the last shard adds count - 1 partials) and the epilogue ring (every shard
// but the first adds one), replayed in turn; their ceilings without communication (time only: the
// sums are checked by the GPU tests), and the fused form on hopper_gemm_t, its partials through the
// summing consumer's C slots and (HopperRowShards::sum_in_ring) through the stage ring.
// HGEMM_GROUPS=g: row groups a shard (default 1). HGEMM_RS_PEER=p (with HGEMM_RS): a sixth graph,
// the fused form on hopper_gemm_t while a second stream copies the peer blocks' rows of its
// output to GPU p (peer access, in `groups` pieces a block, all started with the GEMM): the
// operation's bytes on the links and in memory without its counts, waits and signals. Run one
// probe on each GPU at once (HGEMM_DEVICE) for both directions, as matmul_reduce_scatter moves
// them. HGEMM_RS_GROUP=g (with HGEMM_RS): both fused forms again at raster g, in the same rotation.
// HGEMM_DEVICE=d: the GPU to run on (default 0).
// HGEMM_COPIES=c (with HGEMM_SUSTAIN, no shards): hopper_gemm_t on c copies of the operands,
// each allocated apart, replayed in turn (how far the time moves with the buffers' places).
// HGEMM_CANDIDATES=1 (with HGEMM_SUSTAIN): every cuBLASLt candidate of the shape (its ranking), as
// graphs replayed in turn with the own GEMM's: which plan is fastest at the power cap, against the
// one symmem's Gemm keeps (its tuning times single launches back to back).
// HGEMM_T=1: the experimental hopper_gemm_t (transposed 160 x 128 tiles) checked and timed beside
// (with shards too, checked against cuBLASLt's result; HGEMM_TILE=t times cuBLASLt's first candidate of
// tile t instead of the tuned plan; HGEMM_T_TALL=t adds the kernel with t 160-row tiles a shard,
// HopperGemmOptions::t_tall, beside the one with the chosen count, hopper_t_tall; HGEMM_T_GROUP=g the
// kernel at raster g beside the one at group_m; HGEMM_T_COUNTED=1,
// with shards: its counted instantiation, HopperRowShards::done in HGEMM_GROUPS groups, beside).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "../bench/pattern.cuh"  // fill_bf16_kernel: the operands the overlap benchmark multiplies
#include "overlap/gemm.hpp"
#include "overlap/hopper_gemm.hpp"
#include "probe_util.cuh"

// Median us of one op of each graph of `ops` launches of f(stream), the graphs replayed in turn.
// which: 0 both, 1 f only, 2 g only (the other's time is then 0).
template <class F, class G>
static void sustained_us(F f, G g, int reps, int ops, int which, float& tf, float& tg) {
  const std::vector<float> med = replay_medians({f, g}, ops, reps, {which == 2, which == 1});
  tf = med[0];
  tg = med[1];
}

// Appends one JSON line to `path` (where not null): the GPU, $COMMIT, then `fields` (printf-style,
// the object's remaining members without braces).
__attribute__((format(printf, 2, 3))) static void append_json(const char* path, const char* fields, ...) {
  if (path == nullptr) return;
  int dev = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  const char* commit = std::getenv("COMMIT");
  FILE* f = std::fopen(path, "a");
  if (f == nullptr) return;
  std::fprintf(f, "{\"gpu\": \"%s\", \"commit\": \"%s\", ", prop.name, commit ? commit : "");
  va_list ap;
  va_start(ap, fields);
  std::vfprintf(f, fields, ap);
  va_end(ap);
  std::fprintf(f, "}\n");
  std::fclose(f);
}

template <class F>
static float median_us(F f, int reps) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(e0));
    f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Downloads `c` (m x n bf16) and compares it with cuBLASLt's `hr`: the elements off by more than
// 2% (relative to |want| + 1), the worst such error into `worst`, and the first bad one printed
// under `label`.
static int64_t compare(const __nv_bfloat16* c, const std::vector<__nv_bfloat16>& hr, int64_t m, int64_t n, double& worst, const char* label) {
  std::vector<__nv_bfloat16> hc(m * n);
  CK(cudaMemcpy(hc.data(), c, m * n * 2, cudaMemcpyDeviceToHost));
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < m * n; ++i) {
    const double x = __bfloat162float(hc[i]), y = __bfloat162float(hr[i]);
    const double err = std::fabs(x - y) / (std::fabs(y) + 1.0);
    if (!(err <= 0.02)) {
      if (first_bad < 0) first_bad = i;
      ++bad;
    }
    if (!(err <= worst)) worst = err;
  }
  if (first_bad >= 0)
    std::printf("%s: first bad at row %lld col %lld: got %g want %g\n", label, (long long)(first_bad / n), (long long)(first_bad % n),
                __bfloat162float(hc[first_bad]), __bfloat162float(hr[first_bad]));
  return bad;
}

int main(int argc, char** argv) {
  const char* json = nullptr;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--json") {
      json = argv[i + 1];
      for (int j = i; j + 2 < argc + 1; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s M N K [cluster [group_m [reps [max_ctas [shards]]]]] [--json FILE]\n", argv[0]);
    return 2;
  }
  const int64_t m = std::atoll(argv[1]), n = std::atoll(argv[2]), k = std::atoll(argv[3]);
  const int device = std::getenv("HGEMM_DEVICE") != nullptr ? std::atoi(std::getenv("HGEMM_DEVICE")) : 0;
  CK(cudaSetDevice(device));
  symmem::overlap::HopperGemmOptions opt;
  if (argc > 4) opt.cluster = std::atoi(argv[4]);
  if (argc > 5) opt.group_m = std::atoi(argv[5]);
  const int reps = argc > 6 ? std::atoi(argv[6]) : 30;
  // HGEMM_DEFER=d: the own GEMM's defer_halves; HGEMM_VS=d (with HGEMM_SUSTAIN): a third graph,
  // the own GEMM with defer_halves d, replayed in turn with the other two and checked alike.
  if (std::getenv("HGEMM_DEFER") != nullptr) opt.defer_halves = std::atoi(std::getenv("HGEMM_DEFER"));
  symmem::overlap::HopperGemmOptions vs = opt;
  const bool has_vs = std::getenv("HGEMM_VS") != nullptr;
  if (has_vs) vs.defer_halves = std::atoi(std::getenv("HGEMM_VS"));
  if (argc > 7) opt.max_ctas = std::atoi(argv[7]);
  __nv_bfloat16 *a, *b, *c, *r;
  CK(cudaMalloc(&a, m * k * 2));
  CK(cudaMalloc(&b, k * n * 2));
  CK(cudaMalloc(&c, m * n * 2));
  CK(cudaMalloc(&r, m * n * 2));
  const bool constant = std::getenv("HGEMM_CONSTANT") != nullptr && std::atoi(std::getenv("HGEMM_CONSTANT")) != 0;
  const int sustain = std::getenv("HGEMM_SUSTAIN") != nullptr ? std::atoi(std::getenv("HGEMM_SUSTAIN")) : 0;
  // HGEMM_WHICH=cublas or own: with HGEMM_SUSTAIN, replay only that GEMM's graph (a clock and
  // power trace taken beside it then belongs to one kernel).
  const char* which_env = std::getenv("HGEMM_WHICH");
  const int which = which_env == nullptr ? 0 : std::string(which_env) == "cublas" ? 1 : std::string(which_env) == "own" ? 2 : 0;
  if (constant) {
    CK(cudaMemset(a, 0x3c, m * k * 2));
    CK(cudaMemset(b, 0x3c, k * n * 2));
  } else {
    symmem::bench::fill_bf16_kernel<<<1024, 256>>>(reinterpret_cast<uint16_t*>(a), m * k, 1);
    symmem::bench::fill_bf16_kernel<<<1024, 256>>>(reinterpret_cast<uint16_t*>(b), k * n, 2);
  }
  CK(cudaMemset(c, 0xFF, m * n * 2));  // poison (NaN)
  symmem::overlap::Gemm ref(size_t(32) << 20);
  ref.run(m, n, k, a, k, b, n, r, n, nullptr);
  symmem::overlap::HopperRowShards sh;
  const symmem::overlap::HopperRowShards* shp = nullptr;
  __nv_bfloat16* local = nullptr;
  __nv_bfloat16* a_clean = nullptr;  // with shards: A before its poison
  const __nv_bfloat16* a_ref = a;    // what cuBLASLt's timed runs read
  if (argc > 8 && std::atoi(argv[8]) > 0) {
    sh.count = std::atoi(argv[8]);
    sh.rows = static_cast<int>(m / sh.count);
    sh.first = 1 % sh.count;
    CK(cudaMalloc(&local, sh.rows * k * 2));
    CK(cudaMemcpy(local, a + sh.first * sh.rows * k, sh.rows * k * 2, cudaMemcpyDeviceToDevice));
    // cuBLASLt's timed runs read a clean copy: on A with a shard of NaN (0xFFFF) it drew less
    // power and ran 4-16% faster than on the real operands (session 68, 1 x H200, 8192 x 4096 x
    // 7168: 545-573 us against 587-688 whole), which put every "over shards" ratio of sessions
    // 65-67 against a fast floor.
    CK(cudaMalloc(&a_clean, m * k * 2));
    CK(cudaMemcpy(a_clean, a, m * k * 2, cudaMemcpyDeviceToDevice));
    a_ref = a_clean;
    CK(cudaMemset(a + sh.first * sh.rows * k, 0xFF, sh.rows * k * 2));
    sh.local = local;
    sh.local_ld = k;
    shp = &sh;
  }
  // HGEMM_COPIES=c (with HGEMM_SUSTAIN): hopper_gemm_t on c copies of A, B and C, each allocated
  // apart (cudaMalloc), as c graphs replayed in turn with cuBLASLt's: the same kernel on the same
  // values, only the buffers' places differ. How far a GEMM's time moves with where its buffers
  // lie (two identical TensorParallel instances of one symmem-bench run differed by 2-3%).
  if (std::getenv("HGEMM_COPIES") != nullptr && std::atoi(std::getenv("HGEMM_COPIES")) > 0) {
    const int copies = std::atoi(std::getenv("HGEMM_COPIES"));
    if (sustain <= 0 || shp != nullptr) {
      std::fprintf(stderr, "HGEMM_COPIES needs HGEMM_SUSTAIN and no shards\n");
      return 2;
    }
    std::vector<__nv_bfloat16*> bufs;
    std::vector<std::function<void(cudaStream_t)>> fns{[&](cudaStream_t st) { ref.run(m, n, k, a_ref, k, b, n, r, n, st); }};
    for (int i = 0; i < copies; ++i) {
      __nv_bfloat16 *ai, *bi, *ci;
      CK(cudaMalloc(&ai, m * k * 2));
      CK(cudaMalloc(&bi, k * n * 2));
      CK(cudaMalloc(&ci, m * n * 2));
      CK(cudaMemcpy(ai, a, m * k * 2, cudaMemcpyDeviceToDevice));
      CK(cudaMemcpy(bi, b, k * n * 2, cudaMemcpyDeviceToDevice));
      bufs.insert(bufs.end(), {ai, bi, ci});
      fns.push_back([=](cudaStream_t st) { symmem::overlap::hopper_gemm_t(m, n, k, ai, k, bi, n, ci, n, opt, st, nullptr); });
    }
    const std::vector<float> med = replay_medians(fns, sustain, reps);
    std::printf("copies %lld x %lld x %lld group %d: cublasLt %.1f us | own_t on %d copies:", (long long)m, (long long)n, (long long)k, opt.group_m, med[0], copies);
    std::string list;
    for (int i = 0; i < copies; ++i) {
      std::printf(" %.1f (%.3f)", med[1 + i], med[1 + i] / med[1]);
      char one[96];
      std::snprintf(one, sizeof one, "%s{\"a\": \"%p\", \"us\": %.2f}", i ? ", " : "", static_cast<void*>(bufs[3 * i]), med[1 + i]);
      list += one;
    }
    std::printf("\n");
    append_json(json, "\"probe\": \"gemm_t_copies\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"group_m\": %d, \"sustain\": %d, \"cublaslt_us\": %.2f, \"copies\": [%s]",
                (long long)m, (long long)n, (long long)k, opt.group_m, sustain, med[0], list.c_str());
    for (__nv_bfloat16* p : bufs) CK(cudaFree(p));
    return 0;
  }
  if (std::getenv("HGEMM_CANDIDATES") != nullptr && std::atoi(std::getenv("HGEMM_CANDIDATES")) != 0) {
    if (sustain <= 0) {
      std::fprintf(stderr, "HGEMM_CANDIDATES needs HGEMM_SUSTAIN\n");
      return 2;
    }
    const std::vector<std::string> names = ref.candidates(m, n, k, k, n, n);
    const std::string tuned = ref.describe(m, n, k, k, n, n);
    std::vector<std::unique_ptr<symmem::overlap::Gemm>> gs;
    std::vector<std::function<void(cudaStream_t)>> fns;
    std::vector<std::string> ran;
    for (size_t i = 0; i < names.size(); ++i) {
      auto g = std::make_unique<symmem::overlap::Gemm>(size_t(32) << 20);
      try {
        g->pick(i, m, n, k, k, n, n);
        g->run(m, n, k, a_ref, k, b, n, r, n, nullptr);
        CK(cudaDeviceSynchronize());
      } catch (const std::exception& e) {
        (void)cudaGetLastError();
        std::printf("  candidate %zu (%s) does not run: %s\n", i, names[i].c_str(), e.what());
        continue;
      }
      symmem::overlap::Gemm* gp = g.get();
      fns.push_back([=](cudaStream_t st) { gp->run(m, n, k, a_ref, k, b, n, r, n, st); });
      ran.push_back(names[i]);
      gs.push_back(std::move(g));
    }
    fns.push_back([&](cudaStream_t st) { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, opt, st, shp); });
    const std::vector<float> med = replay_medians(fns, sustain, reps);
    size_t pick = 0;
    while (pick + 1 < ran.size() && ran[pick] != tuned) ++pick;
    std::printf("cublasLt candidates %lld x %lld x %lld (graphs of %d, in turn), tuned pick: %s\n", (long long)m, (long long)n, (long long)k, sustain,
                tuned.c_str());
    std::string list;
    for (size_t i = 0; i < ran.size(); ++i) {
      std::printf("  %s %-44s %8.1f us  %.3f x the first, %.3f x the tuned pick\n", i == pick ? "*" : " ", ran[i].c_str(), med[i], med[i] / med[0],
                  med[i] / med[pick]);
      char one[160];
      std::snprintf(one, sizeof one, "%s{\"config\": \"%s\", \"us\": %.2f}", i ? ", " : "", ran[i].c_str(), med[i]);
      list += one;
    }
    const float own = med.back();
    std::printf("  own GEMM%s %8.1f us  %.3f x the tuned pick\n", shp ? " (shards)" : "", own, own / med[pick]);
    append_json(json,
                "\"probe\": \"cublaslt_candidates\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"sustain\": %d, \"shards\": %d, "
                "\"tuned\": \"%s\", \"own_us\": %.2f, \"candidates\": [%s]",
                (long long)m, (long long)n, (long long)k, sustain, shp ? sh.count : 0, tuned.c_str(), own, list.c_str());
    return 0;
  }
  if (std::getenv("HGEMM_RS") != nullptr && std::atoi(std::getenv("HGEMM_RS")) != 0) {
    if (shp == nullptr || sustain <= 0) {
      std::fprintf(stderr, "HGEMM_RS needs shards > 0 and HGEMM_SUSTAIN\n");
      return 2;
    }
    CK(cudaMemcpy(a + sh.first * sh.rows * k, local, sh.rows * k * 2, cudaMemcpyDeviceToDevice));  // (A whole again: no NaN rows)
    // A handle whose signal pad reads "every group landed" (no error record: the default bound).
    uint64_t* pad = nullptr;
    CK(cudaMalloc(&pad, 64 * sizeof(uint64_t)));
    const std::vector<uint64_t> landed(64, uint64_t(1) << 40);
    CK(cudaMemcpy(pad, landed.data(), landed.size() * 8, cudaMemcpyHostToDevice));
    __nv_bfloat16 *part = nullptr, *out = nullptr;
    unsigned long long* done = nullptr;
    CK(cudaMalloc(&part, m * n * 2));
    CK(cudaMalloc(&out, sh.rows * n * 2));
    CK(cudaMalloc(&done, 64 * 64 * sizeof(unsigned long long)));
    symmem::bench::fill_bf16_kernel<<<1024, 256>>>(reinterpret_cast<uint16_t*>(part), m * n, 3);
    symmem::overlap::HopperRowShards fused;
    fused.rows = sh.rows;
    fused.count = sh.count;
    fused.first = sh.count - 1;
    fused.sum_shard = 0;
    fused.groups = std::getenv("HGEMM_GROUPS") != nullptr ? std::atoi(std::getenv("HGEMM_GROUPS")) : 1;
    fused.done = done;
    fused.partials = part;
    fused.out = out;
    fused.handle.local_signals = pad;
    fused.handle.error = nullptr;
    symmem::overlap::HopperRowShards ring = fused, in_ring = fused;
    ring.ring = true;
    in_ring.sum_in_ring = true;
    std::vector<std::function<void(cudaStream_t)>> forms{
        [&](cudaStream_t st) { ref.run(m, n, k, a_ref, k, b, n, r, n, st); },
        [&](cudaStream_t st) { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, opt, st, &fused); },
        [&](cudaStream_t st) { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, opt, st, &ring); },
        [&](cudaStream_t st) { symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, opt, st, &fused); },
        [&](cudaStream_t st) { symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, opt, st, &in_ring); }};
    // HGEMM_RS_PEER=p: the peer blocks' rows of C (every shard but the summed one, shard 0) copied
    // to GPU p beside the GEMM, `groups` pieces a block, forked from and joined to its stream.
    const int peer = std::getenv("HGEMM_RS_PEER") != nullptr ? std::atoi(std::getenv("HGEMM_RS_PEER")) : -1;
    __nv_bfloat16* remote = nullptr;
    cudaStream_t side = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
    const int64_t block = static_cast<int64_t>(sh.rows) * n, piece = block / fused.groups;  // elements
    if (peer >= 0) {
      int can = 0;
      CK(cudaDeviceCanAccessPeer(&can, device, peer));
      if (!can) {
        std::fprintf(stderr, "HGEMM_RS_PEER=%d: GPU %d cannot reach it\n", peer, device);
        return 2;
      }
      const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) CK(e);
      (void)cudaGetLastError();
      CK(cudaSetDevice(peer));
      CK(cudaMalloc(&remote, (m - sh.rows) * n * 2));
      CK(cudaSetDevice(device));
      CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
      CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
      CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
      forms.push_back([&](cudaStream_t st) {
        CK(cudaEventRecord(fork, st));
        CK(cudaStreamWaitEvent(side, fork, 0));
        for (int s2 = 1; s2 < fused.count; ++s2)
          for (int g = 0; g < fused.groups; ++g)
            CK(cudaMemcpyAsync(remote + (s2 - 1) * block + g * piece, c + s2 * block + g * piece, piece * 2, cudaMemcpyDeviceToDevice, side));
        symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, opt, st, &fused);
        CK(cudaEventRecord(join, side));
        CK(cudaStreamWaitEvent(st, join, 0));
      });
    }
    // HGEMM_RS_GROUP=g: both fused forms again at raster g (group_m; hopper_gemm's clipped to a
    // shard's units as matmul_reduce_scatter's launch does), in the same rotation as the others.
    const int rs_group = std::getenv("HGEMM_RS_GROUP") != nullptr ? std::atoi(std::getenv("HGEMM_RS_GROUP")) : 0;
    symmem::overlap::HopperGemmOptions gopt = opt;
    const size_t at_group = forms.size();
    if (rs_group > 0) {
      gopt.group_m = rs_group;
      forms.push_back([&](cudaStream_t st) { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, gopt, st, &fused); });
      forms.push_back([&](cudaStream_t st) { symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, gopt, st, &fused); });
    }
    const std::vector<float> med = replay_medians(forms, sustain, reps);
    std::printf("rs forms %lld x %lld x %lld, %d shards, %d groups, defer_halves %d: cublasLt %.1f us | fused %.1f us (%.3f x) | ring %.1f us (%.3f x) | ring/fused %.4f"
                " | fused on hopper_gemm_t %.1f us (%.3f x) | its partials in the ring %.1f us (%.3f x)\n",
                (long long)m, (long long)n, (long long)k, fused.count, fused.groups, opt.defer_halves, med[0], med[1], med[1] / med[0], med[2],
                med[2] / med[0], med[2] / med[1], med[3], med[3] / med[0], med[4], med[4] / med[0]);
    if (peer >= 0)
      std::printf("rs forms GPU %d: fused on hopper_gemm_t with its peer blocks copied to GPU %d %.1f us (%.3f x cublasLt, %.3f x without)\n",
                  device, peer, med[5], med[5] / med[0], med[5] / med[3]);
    if (rs_group > 0)
      std::printf("rs forms at raster %d (group_m %d beside): fused %.1f us (%.3f x the fused form at %d) | fused on hopper_gemm_t %.1f us (%.3f x)\n",
                  rs_group, opt.group_m, med[at_group], med[at_group] / med[1], opt.group_m, med[at_group + 1], med[at_group + 1] / med[3]);
    append_json(json,
                "\"probe\": \"rs_forms_loopback\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"shards\": %d, \"groups\": %d, "
                "\"sustain\": %d, \"defer_halves\": %d, \"cublaslt_us\": %.2f, \"fused_us\": %.2f, \"ring_us\": %.2f, \"fused_t_us\": %.2f, \"fused_t_in_ring_us\": %.2f, "
                "\"device\": %d, \"peer\": %d, \"fused_t_copies_us\": %.2f, \"group_m\": %d, \"rs_group\": %d, \"fused_group_us\": %.2f, \"fused_t_group_us\": %.2f",
                (long long)m, (long long)n, (long long)k, fused.count, fused.groups, sustain, opt.defer_halves, med[0], med[1], med[2], med[3],
                med[4], device, peer, peer >= 0 ? med[5] : 0.0f, opt.group_m, rs_group, rs_group > 0 ? med[at_group] : 0.0f,
                rs_group > 0 ? med[at_group + 1] : 0.0f);
    return 0;
  }
  std::vector<__nv_bfloat16> hr(m * n);
  CK(cudaMemcpy(hr.data(), r, m * n * 2, cudaMemcpyDeviceToHost));
  double worst = 0;
  int64_t bad = 0;
  // (hopper_gemm takes shards of whole 128 x cluster-row units only; hopper_gemm_t any.)
  const bool own_runs = shp == nullptr || sh.rows % (128 * opt.cluster) == 0;
  for (int w = 0; own_runs && w < (has_vs ? 2 : 1); ++w) {  // each own variant's result against cuBLASLt's
    CK(cudaMemset(c, 0xFF, m * n * 2));  // poison (NaN)
    symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, w == 0 ? opt : vs, nullptr, shp);
    CK(cudaDeviceSynchronize());
    const std::string label = "defer_halves " + std::to_string((w == 0 ? opt : vs).defer_halves);
    bad += compare(c, hr, m, n, worst, label.c_str());
  }
  // HGEMM_T=1: hopper_gemm_t (C^T = B^T A^T in 160 x 128 tiles, as cuBLASLt's tile 29)
  // checked against cuBLASLt's result as well, then (with HGEMM_SUSTAIN) timed in turn with
  // cuBLASLt's plan and the own GEMM.
  if (std::getenv("HGEMM_T") != nullptr && std::atoi(std::getenv("HGEMM_T")) != 0) {
    if (const char* tile = std::getenv("HGEMM_TILE")) {  // cuBLASLt's first candidate of that tile, not the tuned plan
      const std::vector<std::string> names = ref.candidates(m, n, k, k, n, n);
      const std::string want = std::string("tile ") + tile + " ";
      size_t i = 0;
      while (i < names.size() && names[i].find(want) == std::string::npos) ++i;
      if (i == names.size()) {
        std::fprintf(stderr, "HGEMM_TILE=%s: no cuBLASLt candidate of that tile for this shape\n", tile);
        return 2;
      }
      ref.pick(i, m, n, k, k, n, n);
    }
    double worst_t = 0;
    int64_t bad_t = 0;
    // (With shards, shard `first`'s rows come from the local copy, A's being poisoned: the result
    // is still cuBLASLt's, computed before the poison.)
    // HGEMM_T_TALL=t: the kernel with t 160-row tiles a shard (the rest 128) checked and timed beside;
    // HGEMM_T_GROUP=g: with raster g (its tall tiles then chosen for g, unless HGEMM_T_TALL) beside
    // the one at group_m, the two replayed in turn (one power state: the cap moves both alike).
    const bool forced_on = std::getenv("HGEMM_T_TALL") != nullptr || std::getenv("HGEMM_T_GROUP") != nullptr;
    symmem::overlap::HopperGemmOptions lopt = opt;
    if (std::getenv("HGEMM_T_TALL") != nullptr) lopt.t_tall = std::atoi(std::getenv("HGEMM_T_TALL"));
    if (std::getenv("HGEMM_T_GROUP") != nullptr) lopt.group_m = std::atoi(std::getenv("HGEMM_T_GROUP"));
    const int tall = symmem::overlap::hopper_t_tall(m, n, opt, shp), forced = symmem::overlap::hopper_t_tall(m, n, lopt, shp);
    for (int w = 0; w < (forced_on ? 2 : 1); ++w) {
      CK(cudaMemset(c, 0xFF, m * n * 2));  // poison (NaN)
      symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, w == 0 ? opt : lopt, nullptr, shp);
      CK(cudaDeviceSynchronize());
      bad_t += compare(c, hr, m, n, worst_t, w == 0 ? "hopper_gemm_t" : "hopper_gemm_t (HGEMM_T_TALL)");
    }
    // HGEMM_T_COUNTED=1 (with shards): the same shards counted (HopperRowShards::done, in
    // HGEMM_GROUPS row groups a shard, default 1): the kernel's counted instantiation, which
    // matmul_reduce_scatter's fused form runs, without its sum (session 59 put it 1.4% behind the
    // uncounted one at 8B M 16384); checked and timed beside.
    const bool counted_on = shp != nullptr && std::getenv("HGEMM_T_COUNTED") != nullptr && std::atoi(std::getenv("HGEMM_T_COUNTED")) != 0;
    symmem::overlap::HopperRowShards counted_sh = shp != nullptr ? *shp : symmem::overlap::HopperRowShards{};
    unsigned long long* counts = nullptr;
    if (counted_on) {
      counted_sh.groups = std::getenv("HGEMM_GROUPS") != nullptr ? std::atoi(std::getenv("HGEMM_GROUPS")) : 1;
      CK(cudaMalloc(&counts, sizeof(unsigned long long) * counted_sh.count * counted_sh.groups));
      CK(cudaMemset(counts, 0, sizeof(unsigned long long) * counted_sh.count * counted_sh.groups));
      counted_sh.done = counts;
      CK(cudaMemset(c, 0xFF, m * n * 2));
      symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, opt, nullptr, &counted_sh);
      CK(cudaDeviceSynchronize());
      bad_t += compare(c, hr, m, n, worst_t, "hopper_gemm_t (counted)");
    }
    // HGEMM_T_DYN=1: hopper_gemm_t with its dynamic schedule (HopperGemmOptions::tile_counter),
    // checked (and its counter found zero again) and timed beside; HGEMM_T_DYN_TALL=t with t
    // 160-row tiles a shard (HopperGemmOptions::t_tall; 1000: every tile 160 rows).
    const bool dyn_on = std::getenv("HGEMM_T_DYN") != nullptr && std::atoi(std::getenv("HGEMM_T_DYN")) != 0;
    symmem::overlap::HopperGemmOptions dopt = opt;
    unsigned* tile_counter = nullptr;
    if (dyn_on) {
      CK(cudaMalloc(&tile_counter, 8));
      CK(cudaMemset(tile_counter, 0, 8));
      dopt.tile_counter = tile_counter;
      if (std::getenv("HGEMM_T_DYN_TALL") != nullptr) dopt.t_tall = std::atoi(std::getenv("HGEMM_T_DYN_TALL"));
      CK(cudaMemset(c, 0xFF, m * n * 2));
      symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, dopt, nullptr, shp);
      CK(cudaDeviceSynchronize());
      bad_t += compare(c, hr, m, n, worst_t, "hopper_gemm_t (dynamic schedule)");
      unsigned words[2] = {1, 1};
      CK(cudaMemcpy(words, tile_counter, 8, cudaMemcpyDeviceToHost));
      if (words[0] != 0 || words[1] != 0) {
        std::printf("hopper_gemm_t (dynamic schedule): tile counter left at %u, %u\n", words[0], words[1]);
        ++bad_t;
      }
    }
    float tl = 0, tc = 0, td = 0;
    float tr = 0, to = 0, tt = 0;
    if (sustain > 0) {
      std::vector<std::function<void(cudaStream_t)>> fns{
          [&](cudaStream_t st) { ref.run(m, n, k, a_ref, k, b, n, shp ? c : r, n, st); },
          [&](cudaStream_t st) { symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, opt, st, shp); }};
      // (Each optional variant's place among the timed ones: 0 where it is not timed.)
      auto add = [&](bool on, std::function<void(cudaStream_t)> f) {
        if (!on) return size_t(0);
        fns.push_back(std::move(f));
        return fns.size() - 1;
      };
      const size_t io = add(own_runs, [&](cudaStream_t st) { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, opt, st, shp); });
      const size_t il = add(forced_on, [&](cudaStream_t st) { symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, lopt, st, shp); });
      const size_t ic = add(counted_on, [&](cudaStream_t st) { symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, opt, st, &counted_sh); });
      const size_t id = add(dyn_on, [&](cudaStream_t st) { symmem::overlap::hopper_gemm_t(m, n, k, a, k, b, n, c, n, dopt, st, shp); });
      const std::vector<float> med = replay_medians(fns, sustain, reps);
      tr = med[0];
      tt = med[1];
      to = io > 0 ? med[io] : 0;
      tl = il > 0 ? med[il] : 0;
      tc = ic > 0 ? med[ic] : 0;
      td = id > 0 ? med[id] : 0;
    }
    std::printf("gemm_t %lld x %lld x %lld group %d shards %d tall %d: %s (worst rel err %.4f, %lld bad) | cublasLt %.1f us (%s) | own %.1f us | "
                "own_t %.1f us | own_t/cublasLt %.3f, own_t/own %.3f",
                (long long)m, (long long)n, (long long)k, opt.group_m, shp ? sh.count : 0, tall, bad_t ? "FAIL" : "ok", worst_t, (long long)bad_t, tr,
                ref.describe(m, n, k, k, n, n).c_str(), to, tt, tr > 0 ? tt / tr : 0.0, to > 0 ? tt / to : 0.0);
    if (forced_on) std::printf(" | own_t group %d tall %d %.1f us (%.3f x own_t)", lopt.group_m, forced, tl, tt > 0 ? tl / tt : 0.0);
    if (counted_on) std::printf(" | own_t counted (%d groups) %.1f us (%.3f x own_t)", counted_sh.groups, tc, tt > 0 ? tc / tt : 0.0);
    if (dyn_on) std::printf(" | own_t dynamic %.1f us (%.3f x own_t, %.3f x cublasLt)", td, tt > 0 ? td / tt : 0.0, tr > 0 ? td / tr : 0.0);
    std::printf("\n");
    if (tile_counter != nullptr) CK(cudaFree(tile_counter));
    if (counts != nullptr) CK(cudaFree(counts));
    append_json(json,
                "\"probe\": \"gemm_t\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"group_m\": %d, \"sustain\": %d, "
                "\"cublaslt_us\": %.2f, \"own_us\": %.2f, \"own_t_us\": %.2f, \"own_t_forced_us\": %.2f, \"own_t_counted_us\": %.2f, \"own_t_dyn_us\": %.2f, \"tall\": %d, \"forced_tall\": %d, \"forced_group_m\": %d, \"shards\": %d, "
                "\"max_rel_err\": %.5f, \"bad\": %lld, \"cublaslt_plan\": \"%s\"",
                (long long)m, (long long)n, (long long)k, opt.group_m, sustain, tr, to, tt, tl, tc, td, tall, forced, lopt.group_m, shp ? sh.count : 0,
                worst_t, (long long)bad_t, ref.describe(m, n, k, k, n, n).c_str());
    return bad || bad_t ? 1 : 0;
  }
  const double flop = 2.0 * m * n * k;
  float t_ref = 0, t_own = 0, t_vs = 0;
  if (sustain > 0 && has_vs) {
    const std::vector<float> med = replay_medians(
        {[&](cudaStream_t s) { ref.run(m, n, k, a_ref, k, b, n, shp ? c : r, n, s); },
         [&](cudaStream_t s) { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, opt, s, shp); },
         [&](cudaStream_t s) { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, vs, s, shp); }},
        sustain, reps);
    t_ref = med[0];
    t_own = med[1];
    t_vs = med[2];
  } else if (sustain > 0) {
    sustained_us([&](cudaStream_t s) { ref.run(m, n, k, a_ref, k, b, n, shp ? c : r, n, s); },
                 [&](cudaStream_t s) { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, opt, s, shp); }, reps, sustain, which, t_ref, t_own);
  } else {
    t_ref = median_us([&] { ref.run(m, n, k, a_ref, k, b, n, shp ? c : r, n, nullptr); }, reps);
    t_own = median_us([&] { symmem::overlap::hopper_gemm(m, n, k, a, k, b, n, c, n, opt, nullptr, shp); }, reps);
  }
  std::printf("gemm %lld x %lld x %lld%s%s%s cluster %d group %d: %s (worst rel err %.4f, %lld bad) | cublasLt %.1f us (%.0f TF) | own %.1f us (%.0f TF) | own/cublasLt %.3f\n",
              (long long)m, (long long)n, (long long)k, shp ? " (shards)" : "", constant ? " (constant)" : "",
              sustain > 0 ? " (graphs)" : "", opt.cluster, opt.group_m, bad ? "FAIL" : "ok", worst, (long long)bad, t_ref,
              flop / t_ref / 1e6, t_own, flop / t_own / 1e6, t_own / t_ref);
  if (has_vs)
    std::printf("  defer_halves %d: own %.1f us (%.3f x cublasLt) | defer_halves %d: own %.1f us (%.3f x cublasLt) | %d over %d %.4f\n",
                opt.defer_halves, t_own, t_own / t_ref, vs.defer_halves, t_vs, t_vs / t_ref, opt.defer_halves, vs.defer_halves, t_own / t_vs);
  const std::string plan = ref.describe(m, n, k, k, n, n);
  std::printf("  cublasLt plan: %s\n", plan.c_str());
  append_json(json,
              "\"m\": %lld, \"n\": %lld, \"k\": %lld, \"cluster\": %d, \"group_m\": %d, \"shards\": %d, \"constant\": %d, "
              "\"sustain\": %d, \"defer_halves\": %d, \"vs_defer_halves\": %d, \"vs_us\": %.2f, \"own_us\": %.2f, \"cublaslt_us\": %.2f, "
              "\"own_over_cublaslt\": %.4f, \"max_rel_err\": %.5f, \"bad\": %lld, \"cublaslt_plan\": \"%s\"",
              (long long)m, (long long)n, (long long)k, opt.cluster, opt.group_m, shp ? sh.count : 0, constant ? 1 : 0, sustain, opt.defer_halves,
              has_vs ? vs.defer_halves : -1, t_vs, t_own, t_ref, t_own / t_ref, worst, (long long)bad, plan.c_str());
  return bad ? 1 : 0;
}
