// Expert-parallel dispatch and combine against references built from every rank's routing: each
// expert's received rows as a multiset (their order is not defined), the counts, and combine as
// sum_k w_k f_e(x) with a non-identity expert function. Random routing with -1 entries, a hot
// expert, a rank with zero tokens, bf16 and fp8 (a partial last scale group), a CUDA graph replayed
// with new data, and an over-capacity dispatch and an out-of-range expert index reported on every
// rank; then random shapes, routings and call forms drawn from one seed (Moe.RandomShapesRoutingAndCallForms).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "reference.hpp"

using namespace symmem;
using namespace symmem::test;

namespace {

struct Routing {
  int tokens = 0;
  std::vector<uint8_t> x;        // [T, row payload] bf16 or fp8
  std::vector<uint32_t> scales;  // [T, words] (fp8): fp32 bits, or packed UE8M0 exponents
  std::vector<int32_t> idx;      // [T, K]
  std::vector<float> w;          // [T, K]
};

// How a case departs from the fixed tests' inputs and calls (the defaults are theirs).
struct Variant {
  uint64_t tokens_seed = 0;      // non-zero: each rank's token count drawn from it (0 to max_tokens)
  bool tokens_per_call = false;  // ... and drawn again for every call (not for a graph: it replays its count)
  bool duplicates = false;       // a token may name one expert twice: a row and a term for each entry
  bool idx_int64 = false;        // topk_idx as int64
  bool weights = true;           // topk_weights passed (else null: weight 1)
  bool weighted = true;          // the checked combine weighs by them (else a plain sum)
  int between = 0;               // tokens a rank of a second layer (another ExpertParallel) that runs a
                                 // checked dispatch + combine, and an all-reduce, between each
                                 // checked dispatch and its combine (0: none)
  bool* lines = nullptr;         // non-null: told whether the object dispatched through lines
};

// Rank r's inputs, regenerable on every rank. Rank 1 has no tokens (when there are 2+ ranks); the
// others' counts depend on r only (a graph replays with new data, not new counts); expert 1 is
// hot; about one entry in eight is -1; a token's experts are distinct (while it has experts left
// to name; then -1). A Variant with a tokens_seed draws the counts instead, a sixth of them 0.
Routing make_routing(int r, int n, const moe::Config& c, uint64_t salt, const Variant& v = Variant{}) {
  std::mt19937_64 g(9001 + 31 * r + salt);
  Routing R;
  R.tokens = n >= 2 && r == 1 ? 0 : std::max(0, c.max_tokens - (r * 3) % 5);
  if (v.tokens_seed != 0) {
    std::mt19937_64 gt(v.tokens_seed * 7919 + 131 * r + (v.tokens_per_call ? salt : 0));
    R.tokens = gt() % 6 == 0 ? 0 : 1 + static_cast<int>(gt() % c.max_tokens);
  }
  const size_t es = c.fp8 ? 1 : 2, words = moe::detail::scale_words(c.hidden, c.fp8, c.ue8m0);
  R.x.resize(static_cast<size_t>(R.tokens) * c.hidden * es);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (size_t i = 0; i < R.x.size() / es; ++i) from_float(c.fp8 ? DataType::kFp8E4M3 : DataType::kBFloat16, u(g) * (c.fp8 ? 4 : 1), &R.x[i * es]);
  R.scales.resize(static_cast<size_t>(R.tokens) * words);
  for (auto& s : R.scales) {
    if (c.ue8m0) {
      s = 0;
      for (int b = 0; b < 4; ++b) s |= static_cast<uint32_t>(120 + g() % 15) << (8 * b);  // exponents near 2^0
    } else {
      const float f = 0.5f + 0.01f * static_cast<float>(g() % 100);
      std::memcpy(&s, &f, 4);
    }
  }
  R.idx.assign(static_cast<size_t>(R.tokens) * c.topk, -1);
  R.w.assign(R.idx.size(), 0.f);
  const int hot = 1 % c.num_experts;
  for (int t = 0; t < R.tokens; ++t) {
    std::vector<int> chosen;
    for (int k = 0; k < c.topk; ++k) {
      const bool left = static_cast<int>(chosen.size()) < c.num_experts;
      int e;
      do e = g() % 3 == 0 ? hot : static_cast<int>(g() % c.num_experts);
      while (!v.duplicates && left && std::find(chosen.begin(), chosen.end(), e) != chosen.end());
      chosen.push_back(e);
      R.idx[t * c.topk + k] = g() % 8 == 0 || (!v.duplicates && !left) ? -1 : e;
      R.w[t * c.topk + k] = 0.1f + 0.05f * k;
    }
  }
  return R;
}

float bf16_at(const std::vector<uint8_t>& v, size_t i) { return to_float(DataType::kBFloat16, &v[2 * i]); }
float bf16_round(float f) {
  uint8_t b[2];
  from_float(DataType::kBFloat16, f, b);
  return to_float(DataType::kBFloat16, b);
}
// The dequantisation scale of channel h from a row's scale words (the test's expert function
// ignores UE8M0 scales: dispatch moves them bit for bit, which the row comparison checks).
float scale_at(const moe::Config& c, const uint32_t* w, int h) {
  if (!c.fp8 || c.ue8m0) return 1.0f;
  float f;
  std::memcpy(&f, &w[h / 128], 4);
  return f;
}
// The expert function: a per-expert scale of the (dequantised) row.
float expert_scale(int global_expert) { return 1.0f + 0.0625f * static_cast<float>(global_expert % 7); }

// A second MoE layer on its own object, between another layer's dispatch and combine (as an
// engine's next layer, or a layer of another stream of work): T tokens a rank, H 64, top-2 of 2
// experts a rank, small integers as rows and the identity as expert, so that its unweighted
// combine must return exactly twice each row; and an int32 all-reduce on the same communicator.
// Returns "" or what differed (every rank runs it whatever its own results, so no rank waits).
std::string side_layer(moe::ExpertParallel& b, cudaStream_t s) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank(), T = b.config().max_tokens, H = b.config().hidden, E = b.config().num_experts;
  const int El = b.local_experts(), C = b.capacity();
  std::vector<uint8_t> x(static_cast<size_t>(T) * H * 2);
  std::vector<int32_t> idx(static_cast<size_t>(T) * 2);
  for (int t = 0; t < T; ++t) {
    for (int h = 0; h < H; ++h) from_float(DataType::kBFloat16, static_cast<float>((t * 7 + h + me) % 5 - 2), &x[(static_cast<size_t>(t) * H + h) * 2]);
    idx[t * 2] = (t + me) % E, idx[t * 2 + 1] = (t + me + 1) % E;
  }
  DeviceBuffer dx(x.size()), di(idx.size() * 4), recv(static_cast<size_t>(El) * C * H * 2), counts(El * 4), out(x.size()), a(kSideCount * 4),
      ar(kSideCount * 4);
  upload(dx.p, x);
  SYMMEM_CUDA_CHECK(cudaMemcpy(di.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
  upload_side_input(a.p, me);
  SYMMEM_CUDA_CHECK(cudaMemset(out.p, 0xCD, out.n));
  SYMMEM_CUDA_CHECK(cudaMemset(ar.p, 0xCD, ar.n));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  b.dispatch({dx.p, nullptr, di.p, false, nullptr, T}, {recv.p, nullptr, counts.as<int>()}, s);
  c.all_reduce(a.p, ar.p, kSideCount, DataType::kInt32, ReduceOp::kSum, s);
  b.combine(recv.p, out.p, false, s);  // (the identity expert: its output rows are its input rows)
  ctx()->synchronize(s, "moe side layer");
  const auto o = download(out.p, out.n);
  for (size_t i = 0; i < o.size() / 2; ++i)
    if (bf16_at(o, i) != 2 * bf16_at(x, i))
      return "the side layer's combine: out[" + std::to_string(i) + "] = " + std::to_string(bf16_at(o, i)) + ", want " + std::to_string(2 * bf16_at(x, i));
  const std::string bad = side_sum_mismatch(ar.p, n);
  return bad.empty() ? bad : "the all-reduce between: " + bad;
}

// One dispatch + combine (optionally captured in a graph and replayed `replays` times with new
// inputs), checked on every rank: returns "" or the report of every failing rank, the same on all
// of them (agree), so callers may stop on it without splitting the ranks.
// streamed: 1, the object must have taken the streamed dispatch (moe::ExpertParallel::dispatch_streamed);
// 0, it must not have; -1, either. halves: dispatch as dispatch_send then dispatch_recv, and combine
// as combine_send then combine_recv. warm: that
// many dispatch + combine pairs (a graph replayed) before the checked ones, on the first inputs.
// v: the inputs' and the combine's variant (Variant).
std::string run_moe(const moe::Config& cfg, bool graph, int replays, int dispatches = 1, int streamed = -1, bool halves = false,
                    int warm = 0, const Variant& v = Variant{}) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank();
  moe::ExpertParallel ep(c, cfg);
  if (v.lines != nullptr) *v.lines = ep.dispatch_lines();
  std::unique_ptr<moe::ExpertParallel> side;
  if (v.between > 0) side = std::make_unique<moe::ExpertParallel>(c, moe::Config{64, 2, 2 * n, v.between, 0, false});
  if (streamed >= 0 && ep.dispatch_streamed() != (streamed == 1))
    return streamed == 1 ? "the streamed dispatch was not taken" : "the streamed dispatch was taken under SYMMEM_MOE_RING=0";
  const char* cr = std::getenv("SYMMEM_MOE_COMBINE_RING");
  if (streamed == 1 && ep.combine_streamed() != (cr == nullptr || std::string(cr) != "0"))
    return "the streamed combine was " + std::string(ep.combine_streamed() ? "taken under SYMMEM_MOE_COMBINE_RING=0" : "not taken");
  const int El = ep.local_experts(), C = ep.capacity(), H = cfg.hidden, K = cfg.topk;
  const size_t es = cfg.fp8 ? 1 : 2, words = moe::detail::scale_words(H, cfg.fp8, cfg.ue8m0);
  DeviceBuffer x(std::max<size_t>(1, static_cast<size_t>(cfg.max_tokens) * H * es)), sc(std::max<size_t>(4, cfg.max_tokens * words * 4)),
      idx(cfg.max_tokens * K * 8), w(cfg.max_tokens * K * 4), recv_x(static_cast<size_t>(El) * C * H * es),
      recv_sc(std::max<size_t>(4, static_cast<size_t>(El) * C * words * 4)), counts(El * 4), y(static_cast<size_t>(El) * C * H * 2),
      out(std::max<size_t>(16, static_cast<size_t>(cfg.max_tokens) * H * 2));
  cudaStream_t s;
  SYMMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t exec = nullptr;
  std::string why;
  // A routing's rows, indices (int32 or int64), weights and scales into the input buffers.
  auto upload_inputs = [&](const Routing& R) {
    if (R.tokens == 0) return;
    upload(x.p, R.x);
    if (v.idx_int64) {
      const std::vector<int64_t> wide(R.idx.begin(), R.idx.end());
      SYMMEM_CUDA_CHECK(cudaMemcpy(idx.p, wide.data(), wide.size() * 8, cudaMemcpyHostToDevice));
    } else {
      SYMMEM_CUDA_CHECK(cudaMemcpy(idx.p, R.idx.data(), R.idx.size() * 4, cudaMemcpyHostToDevice));
    }
    SYMMEM_CUDA_CHECK(cudaMemcpy(w.p, R.w.data(), R.w.size() * 4, cudaMemcpyHostToDevice));
    if (cfg.fp8) SYMMEM_CUDA_CHECK(cudaMemcpy(sc.p, R.scales.data(), R.scales.size() * 4, cudaMemcpyHostToDevice));
  };
  const float* weights = v.weights ? w.as<float>() : nullptr;
  auto warm_up = [&] {
    const Routing r0 = make_routing(me, n, cfg, 0, v);
    upload_inputs(r0);
    SYMMEM_CUDA_CHECK(cudaMemset(y.p, 0, y.n));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    cudaGraphExec_t pair = capture_graph(s, [&] {
      ep.dispatch({x.p, sc.as<float>(), idx.p, v.idx_int64, weights, r0.tokens}, {recv_x.p, recv_sc.as<float>(), counts.as<int>()}, s);
      ep.combine(y.p, out.p, false, s);
    });
    for (int i = 0; i < warm; ++i) SYMMEM_CUDA_CHECK(cudaGraphLaunch(pair, s));
    ctx()->synchronize(s, "moe warm-up pairs");
    SYMMEM_CUDA_CHECK(cudaGraphExecDestroy(pair));
  };
  if (warm > 0) why = agree(attempt(warm_up));
  // One checked dispatch + combine: "" or this rank's reason.
  auto iteration = [&](int it) -> std::string {
    std::string why;  // (this iteration's, on this rank)
    std::vector<Routing> all;
    for (int r = 0; r < n; ++r) all.push_back(make_routing(r, n, cfg, 100 * it, v));
    const Routing& mine = all[me];
    upload_inputs(mine);
    SYMMEM_CUDA_CHECK(cudaMemset(recv_x.p, 0xCD, recv_x.n));
    SYMMEM_CUDA_CHECK(cudaMemset(out.p, 0xCD, out.n));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    moe::DispatchIn din{x.p, sc.as<float>(), idx.p, v.idx_int64, weights, mine.tokens};
    moe::DispatchOut dout{recv_x.p, recv_sc.as<float>(), counts.as<int>()};
    auto dispatch = [&] {
      if (!halves) return ep.dispatch(din, dout, s);
      ep.dispatch_send(din, s);
      ep.dispatch_recv(dout, s);
    };
    // Dispatch (in a graph: captured once; every replay reads the new routing and rows).
    if (graph && it == 0) exec = capture_graph(s, dispatch);
    for (int d = 0; d < dispatches; ++d) {  // a dispatch may follow a dispatch: the last one counts
      if (graph) SYMMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
      else dispatch();
    }
    ctx()->synchronize(s, "moe dispatch");
    if (side) why = side_layer(*side, s);  // (on every rank, before any rank may stop at a check)
    // Reference: what each local expert must hold, as a multiset of rows.
    std::vector<int> got_counts(El);
    SYMMEM_CUDA_CHECK(cudaMemcpy(got_counts.data(), counts.p, El * 4, cudaMemcpyDeviceToHost));
    auto rx = download(recv_x.p, recv_x.n);
    std::vector<uint32_t> rsc(static_cast<size_t>(El) * C * words);
    if (cfg.fp8) SYMMEM_CUDA_CHECK(cudaMemcpy(rsc.data(), recv_sc.p, rsc.size() * 4, cudaMemcpyDeviceToHost));
    std::vector<uint8_t> yv(y.n);
    for (int le = 0; le < El && why.empty(); ++le) {
      const int ge = me * El + le;
      std::multiset<std::vector<uint8_t>> want, have;
      auto row_of = [&](const uint8_t* data, const uint32_t* scl) {
        std::vector<uint8_t> r(data, data + H * es);
        if (words) r.insert(r.end(), reinterpret_cast<const uint8_t*>(scl), reinterpret_cast<const uint8_t*>(scl + words));
        return r;
      };
      for (int r = 0; r < n; ++r)
        for (int t = 0; t < all[r].tokens; ++t)
          for (int k = 0; k < K; ++k)
            if (all[r].idx[t * K + k] == ge) want.insert(row_of(&all[r].x[static_cast<size_t>(t) * H * es], all[r].scales.data() + static_cast<size_t>(t) * words));
      if (got_counts[le] != static_cast<int>(want.size())) {
        why = "expert " + std::to_string(ge) + " received " + std::to_string(got_counts[le]) + " rows, want " + std::to_string(want.size());
        break;
      }
      for (int i = 0; i < got_counts[le]; ++i) {
        const size_t row = static_cast<size_t>(le) * C + i;
        have.insert(row_of(&rx[row * H * es], words ? &rsc[row * words] : nullptr));
        // The expert's output for this row: scale * dequantised row, bf16.
        for (int h = 0; h < H; ++h) {
          const float v = cfg.fp8 ? to_float(DataType::kFp8E4M3, &rx[row * H + h]) * scale_at(cfg, &rsc[row * words], h)
                                  : to_float(DataType::kBFloat16, &rx[row * H * 2 + 2 * h]);
          from_float(DataType::kBFloat16, v * expert_scale(ge), &yv[row * H * 2 + 2 * h]);
        }
      }
      if (have != want) why = "expert " + std::to_string(ge) + " received a different set of rows";
    }
    if (!why.empty()) return why;
    // Combine, weighted: out[t] = sum_k w_k * scale(e_k) * x[t] (dequantised); w_k = 1 where the
    // combine is unweighted or dispatch had no weights.
    upload(y.p, yv);
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    if (halves) {
      ep.combine_send(y.p, v.weighted, s);
      ep.combine_recv(out.p, s);
    } else {
      ep.combine(y.p, out.p, v.weighted, s);
    }
    ctx()->synchronize(s, "moe combine");
    if (mine.tokens) {
      auto o = download(out.p, static_cast<size_t>(mine.tokens) * H * 2);
      for (int t = 0; t < mine.tokens && why.empty(); ++t)
        for (int h = 0; h < H; ++h) {
          float want = 0, mag = 0;
          const float xv = cfg.fp8 ? to_float(DataType::kFp8E4M3, &mine.x[static_cast<size_t>(t) * H + h]) * scale_at(cfg, &mine.scales[static_cast<size_t>(t) * words], h)
                                   : bf16_at(mine.x, static_cast<size_t>(t) * H + h);
          for (int k = 0; k < K; ++k) {
            const int e = mine.idx[t * K + k];
            if (e < 0) continue;
            const float term = (v.weighted && v.weights ? mine.w[t * K + k] : 1.0f) * bf16_round(xv * expert_scale(e));
            want += term;
            mag += std::fabs(term);
          }
          const float g = bf16_at(o, static_cast<size_t>(t) * H + h);
          if (!(std::fabs(g - want) <= 0.02f * mag + 1e-3f)) {
            why = "combine: token " + std::to_string(t) + " channel " + std::to_string(h) + ": got " + std::to_string(g) + ", want " +
                  std::to_string(want);
            break;
          }
        }
    }
    return why;
  };
  // (The ranks agree on each iteration's verdict before the next one: agreed_step.)
  for (int it = 0; it <= replays && why.empty(); ++it) why = agreed_step([&] { return iteration(it); });
  if (exec) cudaGraphExecDestroy(exec);
  cudaStreamDestroy(s);
  return why;
}

void throw_if(const std::string& why) {
  if (!why.empty()) throw std::runtime_error(why);
}

}  // namespace

TEST(Moe, DispatchCombineBf16) {
  moe::Config cfg{256, 4, 4 * comm().size(), 48, 0, false};
  std::string why = attempt([&] { throw_if(run_moe(cfg, false, 1)); });
  ASSERT_ALL(why.empty(), "bf16: " << why);
}

// Combine's work items cut a row into segments of 2 KiB, or 1 KiB where the one-round combine is
// small (kern::kSmallCombineItems): rows of 2560 bf16 channels (5 KiB) at 8 tokens a rank are five
// segments of 1 KiB, at 128 tokens (from 2 ranks) two of 2 KiB and a half one; fp8 dispatch, in a
// graph (the other shapes here have rows of one segment, shorter than a 1 KiB item).
TEST(Moe, CombineRowsOfSeveralSegments) {
  const int n = comm().size();
  std::string why;
  for (int tokens : {8, 128}) {
    moe::Config cfg{2560, 8, 8 * n, tokens, 0, true};
    why = attempt([&] { throw_if(run_moe(cfg, true, 2)); });
    if (!why.empty()) {
      why = std::to_string(tokens) + " tokens: " + why;
      break;
    }
  }
  ASSERT_ALL(why.empty(), why);
}

// One round of at most 8 tokens a rank travels as LL lines (moe::ExpertParallel::dispatch_lines),
// both ways (the combine's partial rows too): bf16 and fp8 (a partial scale group, UE8M0 scales),
// rows of one line batch a thread and of more (8320 bf16 channels: 2080 lines, 17 combine items),
// ranks of 0 to 8 tokens, three dispatches before a combine in a graph (both slot parities,
// reused), each kernel choice, the halves called apart; and SYMMEM_MOE_LL=0 takes the staged
// dispatch and combine.
TEST(Moe, SmallRoundsTravelAsLines) {
  const int n = comm().size();
  std::string why;
  const moe::Config shapes[] = {{256, 4, 4 * n, 8, 0, false}, {320, 8, 8 * n, 3, 0, true}, {256, 8, 8 * n, 1, 0, true, true},
                                {8320, 4, 4 * n, 2, 0, false}};
  for (const moe::Config& shape : shapes) {
    for (moe::Kernels k : {moe::Kernels::kAuto, moe::Kernels::kOne, moe::Kernels::kTwo}) {
      if (k == moe::Kernels::kOne && comm().shares_gpu()) continue;
      moe::Config cfg = shape;
      cfg.kernels = k;
      const std::string what = "H " + std::to_string(cfg.hidden) + (cfg.fp8 ? " fp8" : " bf16") + ", " + std::to_string(cfg.max_tokens) +
                               " tokens, kernels " + std::to_string(static_cast<int>(k)) + ": ";
      why = attempt([&] {
        if (!moe::ExpertParallel(comm(), cfg).dispatch_lines()) throw std::runtime_error("the lines were not taken");
        throw_if(run_moe(cfg, false, 1));
        throw_if(run_moe(cfg, true, 2, 3));
        if (k == moe::Kernels::kAuto) throw_if(run_moe(cfg, false, 1, 2, -1, true));
      });
      if (!why.empty()) {
        why = what + why;
        break;
      }
    }
    if (!why.empty()) break;
  }
  // Past the lines' 16-bit flag: 65533 pairs first, so that the checked operations run through the
  // two that zero the slots and on into the next cycle of flags (ranks on their own GPUs: sharing
  // one, so many operations take too long).
  if (why.empty() && !comm().shares_gpu()) {
    why = attempt([&] { throw_if(run_moe(shapes[1], true, 2, 3, -1, false, 65533)); });
    if (!why.empty()) why = "past the flag's wrap: " + why;
  }
  // Rounds of up to 32 tokens where SYMMEM_MOE_LL_TOKENS says so (a warp routes several tokens).
  if (why.empty()) {
    ScopedEnv env("SYMMEM_MOE_LL_TOKENS", "32");
    const moe::Config wide{320, 8, 8 * n, 32, 0, true};
    why = attempt([&] {
      if (!moe::ExpertParallel(comm(), wide).dispatch_lines()) throw std::runtime_error("the lines were not taken");
      throw_if(run_moe(wide, false, 1));
      throw_if(run_moe(wide, true, 2, 3));
      throw_if(run_moe(wide, false, 1, 1, -1, true));
    });
    if (!why.empty()) why = "32 tokens (SYMMEM_MOE_LL_TOKENS=32): " + why;
  }
  // The combine in each line format (SYMMEM_MOE_LL_WIDE) at sizes of the other's rule: H 256, 320
  // and 8320 end inside a segment, so some lanes send 2 or 3 of their 4 lines.
  for (const char* wide : {"1", "0"}) {
    if (!why.empty()) break;
    ScopedEnv env("SYMMEM_MOE_LL_WIDE", wide);
    for (int i : {1, 2, 3}) {
      why = attempt([&] {
        throw_if(run_moe(shapes[i], false, 1));
        throw_if(run_moe(shapes[i], true, 2, 3));
      });
      if (!why.empty()) {
        why = std::string("SYMMEM_MOE_LL_WIDE=") + wide + ", H " + std::to_string(shapes[i].hidden) + ": " + why;
        break;
      }
    }
  }
  if (why.empty()) {
    ScopedEnv env("SYMMEM_MOE_LL", "0");
    why = attempt([&] {
      if (moe::ExpertParallel(comm(), shapes[0]).dispatch_lines()) throw std::runtime_error("SYMMEM_MOE_LL=0: the lines were taken");
      throw_if(run_moe(shapes[0], false, 1));
    });
  }
  ASSERT_ALL(why.empty(), why);
}

TEST(Moe, DispatchCombineFp8PartialScaleGroup) {
  moe::Config cfg{320, 8, 8 * comm().size(), 40, 0, true};  // 320 channels: 3 scale groups, the last of 64
  std::string why = attempt([&] { throw_if(run_moe(cfg, false, 0)); });
  ASSERT_ALL(why.empty(), "fp8: " << why);
}

TEST(Moe, DispatchCombineFp8Ue8m0Scales) {
  moe::Config cfg{256, 8, 8 * comm().size(), 32, 0, true, true};  // 2 groups: one packed word
  std::string why = attempt([&] { throw_if(run_moe(cfg, false, 0)); });
  ASSERT_ALL(why.empty(), "fp8 ue8m0: " << why);
}

TEST(Moe, RoundsBoundTheBuffers) {
  // 48 tokens at most in rounds of 16: three rounds, ranks with fewer tokens sending partial and
  // empty ones; the same results as one round; then replayed in a graph with new data. With the
  // rounds (SYMMEM_MOE_RING=0) and with kAuto's choice (streamed where ranks have their own GPUs).
  moe::Config cfg{256, 4, 4 * comm().size(), 48, 0, false, false, 16};
  std::string why;
  for (const char* ring : {"0", static_cast<const char*>(nullptr)}) {
    ScopedEnv env("SYMMEM_MOE_RING", ring);
    const int streamed = ring != nullptr ? 0 : -1;
    why = attempt([&] { throw_if(run_moe(cfg, false, 1, 1, streamed)); });
    if (why.empty()) why = attempt([&] { throw_if(run_moe(cfg, true, 1, 3, streamed)); });  // three dispatches, then combine
    if (!why.empty()) {
      why = std::string(ring != nullptr ? "the rounds: " : "kAuto: ") + why;
      break;
    }
  }
  ASSERT_ALL(why.empty(), "rounds: " << why);
}

TEST(Moe, PipelinedRoundsSplitTheirGrid) {
  // 320 tokens (fp8, top-8) in rounds of 64: grids of 64 blocks of which a share stores the next
  // round while the rest copies (or sums) this one, blocks done storing joining the copy through
  // the claims counter (SYMMEM_MOE_SEND_SHARE, read when the object is made): no share, a few
  // blocks, the default, all but one; the hot expert and the rank without tokens as everywhere.
  const int n = comm().size();
  std::string why;
  ScopedEnv rounds("SYMMEM_MOE_RING", "0");  // (kAuto streams these where ranks have their own GPUs)
  for (const char* share : {"0", "3", "75", "99"}) {
    setenv("SYMMEM_MOE_SEND_SHARE", share, 1);
    const moe::Config cfg{512, 8, 8 * n, 320, 0, true, false, 64};
    why = attempt([&] { throw_if(run_moe(cfg, std::string(share) == "75", 1, std::string(share) == "75" ? 2 : 1)); });
    if (!why.empty()) {
      why = std::string("share ") + share + "%: " + why;
      break;
    }
  }
  unsetenv("SYMMEM_MOE_SEND_SHARE");
  ASSERT_ALL(why.empty(), why);
}

TEST(Moe, StreamedDispatchMatchesTheReference) {
  // SYMMEM_MOE_RING=1: an operation of several rounds as one streamed kernel where every rank has
  // its own GPU (where ranks share one, the rounds as usual): rounds of 16 of 48 tokens (bf16; then
  // in a graph with three dispatches before the combine: the rings' positions run on across
  // operations), and fp8 top-8 in rounds of 64 of 320 tokens, whose rings (128 slots a source)
  // wrap within an operation, twice; that one also with a few send blocks and with one copy block
  // (SYMMEM_MOE_SEND_SHARE 3 and 99; the streamed combine takes 60% for the first, one sum block
  // for the second). The combine streams too, except in the last pass (SYMMEM_MOE_COMBINE_RING=0:
  // the rounds' combine after a streamed dispatch). And fp8 rows wider than a bulk-copy stage (H
  // 8320: 8592 bytes, the second stage holding the payload's tail and the 65 scale words).
  ScopedEnv ring("SYMMEM_MOE_RING", "1");
  const int n = comm().size();
  const int own = comm().shares_gpu() ? 0 : 1;
  const moe::Config bf16{256, 4, 4 * n, 48, 0, false, false, 16}, fp8{512, 8, 8 * n, 320, 0, true, false, 64};
  const moe::Config wide{8320, 4, 4 * n, 48, 0, true, false, 16};
  std::string why = attempt([&] { throw_if(run_moe(bf16, false, 1, 1, own)); });
  if (why.empty()) why = attempt([&] { throw_if(run_moe(bf16, true, 1, 3, own)); });
  if (why.empty()) why = attempt([&] { throw_if(run_moe(wide, false, 1, 1, own)); });
  if (why.empty()) why = attempt([&] { throw_if(run_moe(fp8, false, 1, 2, own)); });
  for (const char* share : {"3", "99"}) {
    if (!why.empty()) break;
    ScopedEnv sh("SYMMEM_MOE_SEND_SHARE", share);
    why = attempt([&] { throw_if(run_moe(fp8, false, 1, 1, own)); });
    if (!why.empty()) why = std::string("send share ") + share + "%: " + why;
  }
  if (why.empty()) {
    ScopedEnv rounds_combine("SYMMEM_MOE_COMBINE_RING", "0");
    why = attempt([&] { throw_if(run_moe(bf16, true, 1, 3, own)); });
    if (!why.empty()) why = "the rounds' combine: " + why;
  }
  ASSERT_ALL(why.empty(), "streamed: " << why);
}

TEST(Moe, ReplayedInACudaGraph) {
  // Three replays of one captured dispatch, each with new rows and routing in the same buffers.
  moe::Config cfg{256, 4, 4 * comm().size(), 32, 0, false};
  std::string why = attempt([&] { throw_if(run_moe(cfg, true, 2)); });
  ASSERT_ALL(why.empty(), "graph: " << why);
}

TEST(Moe, OverCapacityIsReportedAndNothingIsWrittenPastTheBuffer) {
  // In one round, and in rounds of 16: kAuto's choice (the streamed dispatch where ranks have their
  // own GPUs, whose send blocks claim this rank's own expert rows), then the rounds (at 1-2 ranks
  // with their own GPUs, one kernel a round whose send half claims them: the same capacity check).
  Communicator& c = comm();
  const int n = c.size();
  // Pass 3: one round of 8 tokens, through lines (the receiver claims the rows; entry i of the
  // routing goes to expert i mod E, so every expert gets at least two rows at up to 8 ranks).
  for (int pass = 0; pass < 4; ++pass) {  // one round; rounds of 16 streamed where kAuto takes it; the rounds; lines
    const int round_tokens = pass == 1 || pass == 2 ? 16 : 0, T = pass == 3 ? 8 : 64;
    ScopedEnv env("SYMMEM_MOE_RING", pass == 2 ? "0" : nullptr);
    moe::Config cfg{128, 4, 2 * n, T, 1, false, false, round_tokens};  // capacity 1: every expert overflows
    moe::ExpertParallel ep(c, cfg);
    const int El = ep.local_experts();
    std::vector<int32_t> idx(T * 4);
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < 4; ++k) idx[t * 4 + k] = (pass == 3 ? t * 4 + k : t + k) % (2 * n);
    DeviceBuffer x(T * 128 * 2), di(idx.size() * 4), recv(El * 1 * 128 * 2 + 64), counts(El * 4);
    SYMMEM_CUDA_CHECK(cudaMemset(x.p, 0, x.n));
    SYMMEM_CUDA_CHECK(cudaMemcpy(di.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
    SYMMEM_CUDA_CHECK(cudaMemset(recv.p, 0xAB, recv.n));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    std::string why = attempt([&] {
      ep.dispatch({x.p, nullptr, di.p, false, nullptr, T}, {recv.p, nullptr, counts.as<int>()}, nullptr);
      ctx()->synchronize(nullptr, "moe dispatch over capacity");
    });
    auto tail = download(static_cast<char*>(recv.p) + El * 128 * 2, 64);
    const bool untouched = tail == std::vector<uint8_t>(64, 0xAB);
    // Its combine (zeros) leaves the exchange clean for the tests after this one.
    DeviceBuffer y(El * 1 * 128 * 2), out(T * 128 * 2);
    SYMMEM_CUDA_CHECK(cudaMemset(y.p, 0, y.n));
    std::string after = attempt([&] {
      ep.combine(y.p, out.p, false, nullptr);
      ctx()->synchronize(nullptr, "moe combine");
    });
    // The combine after it reports the peers' overflow (every rank hears of every rank's), once.
    const bool peers_reported = n == 1 ? after.empty() : after.find("had a local expert over its capacity in operation") != std::string::npos;
    ASSERT_ALL(why.find("over its capacity of 1") != std::string::npos && untouched && peers_reported,
               "pass " << pass << ", rounds of " << round_tokens << (pass == 2 ? " (SYMMEM_MOE_RING=0)" : "") << ": got '" << why << "', tail untouched " << untouched << ", combine after: '" << after << "'");
  }
}

// An expert index outside [0, num_experts) (not -1) on rank 0: that rank reports it (token and
// index) from its dispatch, every other rank from the combine after it (rank 0 marks them), the
// entries are skipped and the rest of the dispatch is exact: in one round, streamed in rounds of
// 16 where kAuto takes it, and in rounds.
TEST(Moe, OutOfRangeExpertIsReportedOnEveryRankAndSkipped) {
  Communicator& c = comm();
  const int n = c.size(), me = c.rank(), E = 4 * n, K = 4;
  int T = 64;
  auto idx_of = [&](int r) {
    std::vector<int32_t> idx(T * K);
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < K; ++k) idx[t * K + k] = (t + k + r) % E;  // distinct within a token
    idx[((11 + r) % T) * K + 3] = -1;  // no expert (allowed)
    if (r == 0) {
      idx[(5 % T) * K + 1] = E;   // out of range
      idx[(9 % T) * K + 2] = -2;  // negative, not -1
    }
    return idx;
  };
  for (int pass = 0; pass < 4; ++pass) {  // one round; rounds of 16 (streamed where kAuto takes it); the rounds; 8 tokens through lines
    ScopedEnv env("SYMMEM_MOE_RING", pass == 2 ? "0" : nullptr);
    T = pass == 3 ? 8 : 64;
    moe::Config cfg{128, K, E, T, 0, false, false, pass == 1 || pass == 2 ? 16 : 0};
    moe::ExpertParallel ep(c, cfg);
    const int El = ep.local_experts(), C = ep.capacity();
    std::vector<int> want(El, 0);
    for (int r = 0; r < n; ++r)
      for (int32_t e : idx_of(r))
        if (e >= me * El && e < (me + 1) * El) ++want[e - me * El];
    const std::vector<int32_t> idx = idx_of(me);
    DeviceBuffer x(T * 128 * 2), di(idx.size() * 4), recv(static_cast<size_t>(El) * C * 128 * 2), counts(El * 4);
    SYMMEM_CUDA_CHECK(cudaMemset(x.p, 0x3C, x.n));
    SYMMEM_CUDA_CHECK(cudaMemcpy(di.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
    SYMMEM_CUDA_CHECK(cudaMemset(counts.p, 0xFF, counts.n));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::string why = attempt([&] {
      ep.dispatch({x.p, nullptr, di.p, false, nullptr, T}, {recv.p, nullptr, counts.as<int>()}, nullptr);
      ctx()->synchronize(nullptr, "moe dispatch with a bad expert index");
    });
    std::vector<int> got(El);
    SYMMEM_CUDA_CHECK(cudaMemcpy(got.data(), counts.p, El * 4, cudaMemcpyDeviceToHost));
    DeviceBuffer y(static_cast<size_t>(El) * C * 128 * 2), out(T * 128 * 2);
    SYMMEM_CUDA_CHECK(cudaMemset(y.p, 0, y.n));
    const std::string after = attempt([&] {
      ep.combine(y.p, out.p, false, nullptr);
      ctx()->synchronize(nullptr, "moe combine");
    });
    const bool reported = me == 0 ? why.find("topk_idx holds expert") != std::string::npos && why.find("not -1") != std::string::npos && after.empty()
                                  : why.empty() && after.find("team rank 0's topk_idx held an expert outside") != std::string::npos;
    ASSERT_ALL(reported && got == want,
               "pass " << pass << ": dispatch '" << why << "', counts " << (got == want ? "exact" : "wrong") << ", combine after: '" << after << "'");
  }
}

// A second combine of one dispatch is refused (it would read routing records the next dispatch may
// be rewriting) and reported on every rank, whole rows or lines; the pairs before and after it are
// exact (unweighted, every expert output row 0x3F3F in bf16: each token's 4 experts sum to 4 x
// 0.74609375 = 2.984375, exact in bf16).
TEST(Moe, SecondCombineOfOneDispatchIsRefused) {
  const int n = comm().size();
  std::string why;
  for (int tokens : {8, 48}) {  // lines; staged
    moe::Config cfg{256, 4, 4 * n, tokens, 0, false};
    why = attempt([&] {
      moe::ExpertParallel ep(comm(), cfg);
      const int El = ep.local_experts(), C = ep.capacity();
      std::vector<int32_t> idx(static_cast<size_t>(tokens) * 4);
      for (int t = 0; t < tokens; ++t)
        for (int k = 0; k < 4; ++k) idx[t * 4 + k] = (t + k * n + comm().rank()) % (4 * n);  // distinct within a token
      DeviceBuffer x(tokens * 256 * 2), di(idx.size() * 4), recv(static_cast<size_t>(El) * C * 256 * 2), counts(El * 4),
          y(static_cast<size_t>(El) * C * 256 * 2), out(tokens * 256 * 2);
      SYMMEM_CUDA_CHECK(cudaMemset(x.p, 0x3C, x.n));
      SYMMEM_CUDA_CHECK(cudaMemset(y.p, 0x3F, y.n));
      SYMMEM_CUDA_CHECK(cudaMemcpy(di.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
      auto pair = [&](const char* what) {
        SYMMEM_CUDA_CHECK(cudaMemset(out.p, 0xCD, out.n));
        ep.dispatch({x.p, nullptr, di.p, false, nullptr, tokens}, {recv.p, nullptr, counts.as<int>()}, nullptr);
        ep.combine(y.p, out.p, false, nullptr);
        ctx()->synchronize(nullptr, what);
        const auto o = download(out.p, out.n);
        for (size_t i = 0; i < o.size() / 2; ++i)
          if (bf16_at(o, i) != 2.984375f)
            throw std::runtime_error(std::string(what) + ": out[" + std::to_string(i) + "] = " + std::to_string(bf16_at(o, i)) + ", want 2.984375");
      };
      pair("moe pair before");
      const std::string second = attempt([&] {
        ep.combine(y.p, out.p, false, nullptr);
        ctx()->synchronize(nullptr, "moe second combine");
      });
      if (second.find("called a second time for one dispatch") == std::string::npos)
        throw std::runtime_error("a second combine gave '" + second + "'");
      pair("moe pair after");
    });
    if (!why.empty()) {
      why = std::to_string(tokens) + " tokens" + (tokens <= 8 ? " (lines)" : "") + ": " + why;
      break;
    }
  }
  ASSERT_ALL(why.empty(), why);
}

TEST(Moe, BadConfigIsRefusedOnEveryRank) {
  moe::Config cfg{100, 4, 4 * comm().size(), 16, 0, false};  // 200-byte rows: not a multiple of 16
  std::string why = attempt([&] { moe::ExpertParallel ep(comm(), cfg); });
  ASSERT_ALL(why.find("hidden=100") != std::string::npos, "got '" << why << "'");
  // A bad SYMMEM_MOE_RING on one rank: refused on every rank, naming it.
  std::string ring;
  {
    ScopedEnv env("SYMMEM_MOE_RING", comm().rank() == 0 ? "yes" : nullptr);
    ring = attempt([&] { moe::ExpertParallel ep(comm(), moe::Config{256, 4, 4 * comm().size(), 16, 0, false}); });
  }
  ASSERT_ALL(ring.find("SYMMEM_MOE_RING=yes is neither 0 nor 1") != std::string::npos, "got '" << ring << "'");
  // A numeric knob out of range on one rank: refused on every rank, naming it (it used to throw on
  // that rank alone, leaving the others to wait for it in the allocation).
  std::string tune;
  {
    ScopedEnv env("SYMMEM_MOE_TUNE", comm().rank() == 0 ? "999" : nullptr);
    tune = attempt([&] { moe::ExpertParallel ep(comm(), moe::Config{256, 4, 4 * comm().size(), 16, 0, false}); });
  }
  ASSERT_ALL(tune.find("SYMMEM_MOE_TUNE=999 is out of range") != std::string::npos, "got '" << tune << "'");
  // A config set unlike on the last rank: refused on every rank, naming the field that differs.
  if (comm().size() > 1) {
    const int last = comm().size() - 1;
    std::string unlike = attempt([&] { moe::ExpertParallel ep(comm(), moe::Config{256, comm().rank() == last ? 6 : 4, 4 * comm().size(), 16, 0, false}); });
    ASSERT_ALL(unlike.find("arguments differ across ranks (topk)") != std::string::npos, "got '" << unlike << "'");
  }
}

TEST(Moe, OverCapacityOnOneRankIsReportedOnEveryRank) {
  // Every token of every rank goes to expert 0 (rank 0's): only rank 0 overflows; the others hear
  // of it by the end of the combine, so no rank is left alone with an error.
  Communicator& c = comm();
  const int n = c.size();
  moe::Config cfg{128, 2, 2 * n, 16, 2, false};
  moe::ExpertParallel ep(c, cfg);
  const int El = ep.local_experts();
  std::vector<int32_t> idx(16 * 2, -1);
  for (int t = 0; t < 16; ++t) idx[t * 2] = 0;
  DeviceBuffer x(16 * 128 * 2), di(idx.size() * 4), recv(El * 2 * 128 * 2), counts(El * 4), y(El * 2 * 128 * 2), out(16 * 128 * 2);
  SYMMEM_CUDA_CHECK(cudaMemset(x.p, 0, x.n));
  SYMMEM_CUDA_CHECK(cudaMemset(y.p, 0, y.n));
  SYMMEM_CUDA_CHECK(cudaMemcpy(di.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
  SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
  std::string why = attempt([&] {
    ep.dispatch({x.p, nullptr, di.p, false, nullptr, 16}, {recv.p, nullptr, counts.as<int>()}, nullptr);
    ep.combine(y.p, out.p, false, nullptr);
    ctx()->synchronize(nullptr, "moe over capacity on rank 0");
  });
  const bool want = n == 1 || why.find("capacity") != std::string::npos;
  // Clean for the tests after it: one more exchange that fits.
  std::vector<int32_t> none(16 * 2, -1);
  SYMMEM_CUDA_CHECK(cudaMemcpy(di.p, none.data(), none.size() * 4, cudaMemcpyHostToDevice));
  std::string after = attempt([&] {
    ep.dispatch({x.p, nullptr, di.p, false, nullptr, 16}, {recv.p, nullptr, counts.as<int>()}, nullptr);
    ep.combine(y.p, out.p, false, nullptr);
    ctx()->synchronize(nullptr, "moe after");
  });
  ASSERT_ALL(want && after.empty(), "rank " << c.rank() << ": got '" << why << "', after: '" << after << "'");
}

TEST(Moe, EachKernelChoice) {
  // The same checks with each launch choice named (kAuto picks one where ranks have their own GPUs
  // and an operation is one round, so the other tests cover it too): bf16, fp8 with a partial scale
  // group, and rounds replayed in a graph with three dispatches before the combine. Where ranks
  // share a GPU one kernel a round is refused, on every rank, with the reason.
  const int n = comm().size();
  if (comm().shares_gpu()) {
    moe::Config cfg{256, 4, 4 * n, 16, 0, false, false, 0, moe::Kernels::kOne};
    std::string why = attempt([&] { moe::ExpertParallel ep(comm(), cfg); });
    ASSERT_ALL(why.find("needs one rank per GPU") != std::string::npos, "got '" << why << "'");
  }
  for (moe::Kernels k : {moe::Kernels::kOne, moe::Kernels::kTwo}) {
    if (k == moe::Kernels::kOne && comm().shares_gpu()) continue;
    const char* name = k == moe::Kernels::kOne ? "one kernel" : "two kernels";
    std::string why = attempt([&] { throw_if(run_moe(moe::Config{256, 4, 4 * n, 48, 0, false, false, 0, k}, false, 1)); });
    if (why.empty()) why = attempt([&] { throw_if(run_moe(moe::Config{320, 8, 8 * n, 40, 0, true, false, 0, k}, false, 0)); });
    if (why.empty()) why = attempt([&] { throw_if(run_moe(moe::Config{256, 4, 4 * n, 48, 0, false, false, 16, k}, true, 1, 3)); });
    ASSERT_ALL(why.empty(), name << ": " << why);
  }
}

TEST(Moe, PhaseStampsAreOrdered) {
  // SYMMEM_MOE_TRACE=1 (read when the object is made): the kernels stamp their phases, and the
  // stamps of one step follow the order the protocol imposes, whatever the launch choice (64
  // tokens: above any round the LL lines take); then a lines dispatch of 16 tokens (its kernels for
  // rounds over 8 tokens stamp: moe_kernels.hpp, TracePoint).
  Communicator& c = comm();
  const int n = c.size();
  setenv("SYMMEM_MOE_TRACE", "1", 1);
  std::vector<moe::Kernels> choices{moe::Kernels::kTwo};
  if (!c.shares_gpu()) choices.push_back(moe::Kernels::kOne);
  std::string why;
  for (moe::Kernels k : choices) {
    moe::ExpertParallel ep(c, moe::Config{128, 2, 2 * n, 64, 0, false, false, 0, k});
    const int El = ep.local_experts(), C = ep.capacity();
    std::vector<int32_t> idx(64 * 2);
    for (int t = 0; t < 64; ++t) idx[t * 2] = (t + c.rank()) % (2 * n), idx[t * 2 + 1] = -1;
    DeviceBuffer x(64 * 128 * 2), di(idx.size() * 4), recv(static_cast<size_t>(El) * C * 128 * 2), counts(El * 4),
        y(static_cast<size_t>(El) * C * 128 * 2), out(64 * 128 * 2);
    SYMMEM_CUDA_CHECK(cudaMemset(x.p, 0, x.n));
    SYMMEM_CUDA_CHECK(cudaMemset(y.p, 0, y.n));
    SYMMEM_CUDA_CHECK(cudaMemcpy(di.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
    std::vector<uint64_t> t;
    why += attempt([&] {
      ep.dispatch({x.p, nullptr, di.p, false, nullptr, 64}, {recv.p, nullptr, counts.as<int>()}, nullptr);
      ep.combine(y.p, out.p, false, nullptr);
      ctx()->synchronize(nullptr, "moe trace");
      t = ep.trace_ns();
    });
    if (!why.empty()) break;
    // Send start <= elected <= flags raised; receive start <= flags in <= elected <= done; the
    // combine starts after the dispatch is done (stream order); its halves likewise.
    // Block 0's own work is done before the election in each half.
    const int chains[][4] = {{0, 1, 2, -1},  {3, 4, 5, 6},     {0, 6, 7, -1},    {7, 8, 9, -1}, {10, 11, 12, -1},
                             {0, 13, 1, -1}, {4, 14, 5, -1}, {7, 15, 8, -1}, {11, 16, 12, -1}};
    bool ordered = t.size() == 20 && t[17] == 0 && t[18] == 0 && t[19] == 0;  // (the last three: lines only)
    for (const auto& ch : chains)
      for (int i = 0; ordered && i + 1 < 4 && ch[i + 1] >= 0; ++i) ordered = t[ch[i]] != 0 && t[ch[i]] <= t[ch[i + 1]];
    if (!ordered) {
      std::ostringstream o;
      o << (k == moe::Kernels::kOne ? "one kernel" : "two kernels") << ": stamps out of order:";
      for (uint64_t v : t) o << ' ' << v;
      why += o.str();
    }
  }
  // The lines dispatch's send block 0: start <= routed <= counted <= headers <= rows issued <= its
  // end; its receive block 0: start <= line 0 and routing in <= row stored; the publisher: every
  // routing line in <= done.
  if (why.empty()) {
    ScopedEnv tokens("SYMMEM_MOE_LL_TOKENS", "16");
    const moe::Config cfg{256, 4, 4 * n, 16, 0, false};
    why = attempt([&] { throw_if(run_moe(cfg, false, 1)); });  // (the results with the stamps on)
    if (why.empty()) {
      moe::ExpertParallel ep(c, cfg);
      if (!ep.dispatch_lines()) why = "the lines were not taken";
      std::vector<int32_t> idx(16 * 4, -1);
      for (int t = 0; t < 16; ++t) idx[t * 4] = (t + c.rank()) % (4 * n);
      DeviceBuffer x(16 * 256 * 2), di(idx.size() * 4), recv(static_cast<size_t>(ep.local_experts()) * ep.capacity() * 256 * 2),
          counts(ep.local_experts() * 4);
      SYMMEM_CUDA_CHECK(cudaMemset(x.p, 0, x.n));
      SYMMEM_CUDA_CHECK(cudaMemcpy(di.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
      std::vector<uint64_t> t;
      if (why.empty()) why = attempt([&] {
        ep.dispatch({x.p, nullptr, di.p, false, nullptr, 16}, {recv.p, nullptr, counts.as<int>()}, nullptr);
        ctx()->synchronize(nullptr, "moe lines trace");
        t = ep.trace_ns();
      });
      const int chains[][6] = {{0, 17, 18, 19, 13, 1}, {3, 4, 14, -1, -1, -1}, {5, 6, -1, -1, -1, -1}};
      bool ordered = why.empty() && t.size() == 20;
      for (const auto& ch : chains)
        for (int i = 0; ordered && i + 1 < 6 && ch[i + 1] >= 0; ++i) ordered = t[ch[i]] != 0 && t[ch[i]] <= t[ch[i + 1]];
      if (why.empty() && !ordered) {
        std::ostringstream o;
        o << "lines, 16 tokens: stamps out of order:";
        for (uint64_t v : t) o << ' ' << v;
        why = o.str();
      }
    }
  }
  unsetenv("SYMMEM_MOE_TRACE");
  ASSERT_ALL(why.empty(), why);
}

// Random shapes, routings and call forms, drawn from one seed (the same on every rank): H from 8
// (bf16) or 16 (fp8) channels to 8192 / 16384, top-1 to top-16, 1 to 40 experts a rank, 1 to 320
// tokens a rank (the lines' rounds, the staged one-round sizes and the rounds), round_tokens
// splitting an operation into up to ~12 rounds, each kernel choice the ranks allow, a capacity
// either 0 (no overflow possible) or exactly the largest count a case reaches plus 0-2 rows; token
// counts drawn per rank (a sixth of them 0), per call where no graph holds them; topk_idx int32 or
// int64, weights or none, combine weighted or not, tokens that name one expert twice (a row and a
// term for each entry), the halves called apart, a graph replayed with new data, a dispatch
// repeated before its combine, a second layer (another object) and an all-reduce between a
// dispatch and its combine; SYMMEM_MOE_RING, SYMMEM_MOE_LL and SYMMEM_MOE_LL_TOKENS set for some.
TEST(Moe, RandomShapesRoutingAndCallForms) {
  const int n = comm().size();
  const bool shared = comm().shares_gpu();
  const int cases = n > 4 ? 24 : 40;
  std::mt19937_64 g(20261202);
  int fp8s = 0, rounds = 0, lines = 0, graphs = 0, halves_n = 0, wide_idx = 0, dups = 0, tight = 0, layers = 0;
  std::string why;
  for (int c = 0; c < cases && why.empty(); ++c) {
    moe::Config cfg;
    cfg.fp8 = g() % 3 == 0;
    cfg.ue8m0 = cfg.fp8 && g() % 2 == 0;
    const int unit = cfg.fp8 ? 16 : 8;
    cfg.hidden = unit * (1 + static_cast<int>(g() % (1u << (g() % 11))));
    const int kind = static_cast<int>(g() % 3);
    cfg.max_tokens = kind == 0 ? 1 + static_cast<int>(g() % 8) : kind == 1 ? 9 + static_cast<int>(g() % 24) : 33 + static_cast<int>(g() % 288);
    cfg.max_tokens = std::max(1, std::min(cfg.max_tokens, (1 << 20) / cfg.hidden));  // (the host reference's work)
    cfg.topk = 1 + static_cast<int>(g() % 16);
    cfg.num_experts = n * (1 + static_cast<int>(g() % (g() % 4 == 0 ? 40 : 6)));
    if (cfg.max_tokens > 1 && g() % 3 == 0) cfg.round_tokens = std::max(1, cfg.max_tokens / (2 + static_cast<int>(g() % 11)));
    const int kern_pick = static_cast<int>(g() % 3);
    cfg.kernels = kern_pick == 1 || (kern_pick == 2 && shared) ? moe::Kernels::kTwo : kern_pick == 2 ? moe::Kernels::kOne : moe::Kernels::kAuto;
    const bool one_round = cfg.round_tokens == 0 || cfg.round_tokens >= cfg.max_tokens;
    Variant v;
    const bool graph = g() % 3 == 0;
    const int replays = 1 + static_cast<int>(g() % 2), dispatches = 1 + (g() % 4 == 0 ? 1 : 0);
    const bool halves = one_round && g() % 3 == 0;
    v.tokens_seed = g() | 1;
    v.tokens_per_call = !graph && g() % 2 == 0;
    v.duplicates = g() % 4 == 0;
    v.idx_int64 = g() % 2 == 0;
    v.weights = g() % 4 != 0;
    v.weighted = g() % 3 != 0;
    const char* ring = g() % 4 == 0 ? "0" : std::getenv("SYMMEM_MOE_RING");
    const char* ll = g() % 6 == 0 ? "0" : std::getenv("SYMMEM_MOE_LL");
    const char* ll_tokens = g() % 6 == 0 ? "32" : std::getenv("SYMMEM_MOE_LL_TOKENS");
    // The capacity: the most rows any expert receives in this case's calls (run_moe's salts), plus
    // 0-2, or 0 where that cannot overflow.
    std::vector<int> most(cfg.num_experts, 0);
    for (int it = 0; it <= replays; ++it) {
      std::vector<int> count(cfg.num_experts, 0);
      for (int r = 0; r < n; ++r)
        for (int32_t e : make_routing(r, n, cfg, 100 * it, v).idx)
          if (e >= 0) ++count[e];
      for (int e = 0; e < cfg.num_experts; ++e) most[e] = std::max(most[e], count[e]);
    }
    const int need = std::max(1, *std::max_element(most.begin(), most.end()));
    const int slack = static_cast<int>(g() % 3);
    cfg.capacity = g() % 2 == 0 && need <= n * cfg.max_tokens ? 0 : need + slack;
    v.between = g() % 4 == 0 ? (g() % 2 == 0 ? 8 : 24) : 0;  // (lines; staged)
    std::ostringstream what;
    what << "case " << c << ": H " << cfg.hidden << (cfg.fp8 ? cfg.ue8m0 ? " fp8 ue8m0" : " fp8" : " bf16") << ", top-" << cfg.topk << ", "
         << cfg.num_experts << " experts, " << cfg.max_tokens << " tokens in rounds of " << cfg.round_tokens << ", capacity " << cfg.capacity
         << " (need " << need << "), kernels " << static_cast<int>(cfg.kernels) << (graph ? ", graph" : "") << (halves ? ", halves" : "")
         << ", " << dispatches << " dispatch(es), idx " << (v.idx_int64 ? "int64" : "int32") << (v.weights ? "" : ", no weights")
         << (v.weighted ? "" : ", unweighted") << (v.duplicates ? ", duplicates" : "") << (v.tokens_per_call ? ", tokens per call" : "")
         << (ring && std::string(ring) == "0" ? ", SYMMEM_MOE_RING=0" : "") << (ll && std::string(ll) == "0" ? ", SYMMEM_MOE_LL=0" : "")
         << (ll_tokens && std::string(ll_tokens) == "32" ? ", SYMMEM_MOE_LL_TOKENS=32" : "")
         << (v.between ? ", a layer of " + std::to_string(v.between) + " tokens between" : "") << ": ";
    ScopedEnv e1("SYMMEM_MOE_RING", ring), e2("SYMMEM_MOE_LL", ll), e3("SYMMEM_MOE_LL_TOKENS", ll_tokens);
    bool through_lines = false;
    v.lines = &through_lines;
    why = agreed_step([&] { return run_moe(cfg, graph, replays, dispatches, -1, halves, 0, v); });
    lines += through_lines;
    if (!why.empty()) why = what.str() + why;
    fp8s += cfg.fp8, rounds += !one_round, graphs += graph, halves_n += halves, wide_idx += v.idx_int64, dups += v.duplicates;
    tight += cfg.capacity != 0 && slack == 0;
    layers += v.between > 0;
  }
  if (why.empty() && comm().rank() == 0)
    std::printf("random moe: %d cases ran and checked (%d fp8, %d in rounds, %d through lines, %d graphs, %d halves, %d int64 idx, "
                "%d duplicates, %d at exact capacity, %d with a second layer between)\n",
                cases, fp8s, rounds, lines, graphs, halves_n, wide_idx, dups, tight, layers);
  ASSERT_ALL(why.empty(), why);
}
