// Names, parsing, and the algorithm table.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "symmem/collectives.hpp"
#include "symmem/error.hpp"
#include "symmem/types.hpp"
#include "symmem/device/workspace.hpp"

namespace symmem {

namespace {
const char* kDtypes[] = {"float", "half", "bfloat16", "fp8_e4m3", "fp8_e5m2", "int32", "uint8", "int8", "uint32", "int64", "uint64", "double"};
static_assert(std::size(kDtypes) == static_cast<size_t>(kLastDataType) + 1, "a name for every DataType");
const char* kRedops[] = {"sum", "max", "min", "prod", "avg"};
const char* kColls[] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all", "all_to_all_v", "reduce", "gather", "scatter"};
static_assert(std::size(kColls) == static_cast<size_t>(CollOp::kScatter) + 1, "a name for every CollOp");
const char* kAlgos[] = {"auto", "nccl", "ll", "one_shot", "two_shot", "direct", "push", "two_shot_push"};

template <size_t N>
int find_name(const char* (&names)[N], const std::string& s) {
  for (size_t i = 0; i < N; ++i)
    if (s == names[i]) return static_cast<int>(i);
  return -1;
}
template <size_t N>
std::string list(const char* (&names)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) out += (i ? ", " : "") + std::string(names[i]);
  return out;
}
}  // namespace

// (A value outside the enum, cast from an integer, reads "invalid": the checks that refuse it name it.)
const char* dtype_name(DataType t) {
  const int i = static_cast<int>(t);
  return i >= 0 && i < static_cast<int>(std::size(kDtypes)) ? kDtypes[i] : "invalid";
}
const char* redop_name(ReduceOp op) {
  const int i = static_cast<int>(op);
  return i >= 0 && i < static_cast<int>(std::size(kRedops)) ? kRedops[i] : "invalid";
}
const char* coll_name(CollOp op) {
  const int i = static_cast<int>(op);
  return i >= 0 && i < static_cast<int>(std::size(kColls)) ? kColls[i] : "invalid";
}
const char* algo_name(Algo a) { return kAlgos[static_cast<int>(a)]; }

DataType parse_dtype(const std::string& s) {
  std::string t = s == "float32" || s == "f32" ? "float" : s == "float16" || s == "f16" || s == "fp16" ? "half"
                : s == "bf16" ? "bfloat16" : s == "e4m3" || s == "f8e4m3" ? "fp8_e4m3" : s == "e5m2" || s == "f8e5m2" ? "fp8_e5m2"
                : s == "float64" || s == "f64" || s == "fp64" ? "double" : s == "char" ? "int8" : s;
  int i = find_name(kDtypes, t);
  if (i < 0) fail("unknown dtype '" + s + "'; use one of " + list(kDtypes));
  return static_cast<DataType>(i);
}
ReduceOp parse_redop(const std::string& s) {
  int i = find_name(kRedops, s);
  if (i < 0) fail("unknown reduction '" + s + "'; use one of " + list(kRedops));
  return static_cast<ReduceOp>(i);
}
CollOp parse_coll(const std::string& s) {
  int i = find_name(kColls, s);
  if (i < 0) fail("unknown collective '" + s + "'; use one of " + list(kColls));
  return static_cast<CollOp>(i);
}
Algo parse_algo(const std::string& s) {
  int i = find_name(kAlgos, s);
  if (i < 0) fail("unknown algorithm '" + s + "'; use one of " + list(kAlgos));
  return static_cast<Algo>(i);
}

TuningTable TuningTable::defaults() {
  // Measured, bf16 sum, graph replays: 2 ranks on 2 x H200 (bench/results/2026-11-26-h200x2-*.json)
  // and 4 ranks on 4 x H200 (bench/results/2026-11-26-h200x4-*.json); the 4-rank choices also
  // stand for other team sizes until measured there. All-reduce at 3+ ranks, 128-512 KiB: ll
  // (two-shot past 256 KiB), from 4 x H100 and 3 x H100 in one run (session 7: 256 KiB ll 8.7 us,
  // push 9.1; 512 KiB ll two-shot 10.8, push 11.3, two_shot 12.8). Since LL lines carry 12 bytes
  // (session 9, 4 x H100, bench/results/2026-11-26-h100x4-ec16534-*): ll to 1 MiB for all-reduce
  // (4 ranks: 1 MiB ll 13.1 us, two_shot 14.9; 2 ranks: 512 KiB ll 6.1, push 7.1; 1 MiB 8.3, 8.8)
  // and to 2 MiB for all-gather at 3+ ranks (1 MiB ll 7.4, push 9.7; 2 MiB 12.2, 13.3; 4 MiB push
  // wins). two_shot up to 8 MiB at 3+ ranks: 55.6-55.9 us against NCCL's 60.9-61.3 in four 4 x H100
  // runs (0eb1c38, and session 9's bench/results/2026-11-26-h100x4-cc65534-all_reduce-run*.json);
  // NCCL from 16 MiB. Broadcast at 2 ranks: push at every size from 1 MiB since barrier_block's
  // waits pause (session 70, 2 x H200: 32 / 64 / 128 MiB 102.6 / 194.3 / 376 us, NCCL 112.6 / 206
  // / 388; bench/results/2026-11-30-h200x2-*-s70c*); since session 74 with one barrier less (1 / 4
  // / 16 MiB 7.72 / 17.1 / 52.2 us against NCCL's 11.6 / 24.6 / 64.1). "nccl" is chosen only where
  // NCCL on ordinary buffers (what symmem calls) was faster than every symmem algorithm.
  // (Broadcast never names direct: auto decides from `out` alone, since only the root passes an
  // input.) Where buffers do not fit the choice, or NCCL is absent (ranks share a GPU),
  // Communicator::select falls back.
  // 2 ranks, since LL grids take up to two blocks an SM there (session 74, 2 x H200, two runs
  // each; bench/results/2026-11-30-h200x2-05c2118-s74c3-*): ll up to its capacity, 1 MiB a peer,
  // for all-reduce (1 MiB 7.05 us against one_shot 7.98-8.13), reduce-scatter (2 MiB 7.15 against
  // direct 7.94-7.97 and push 8.22-8.23), all-gather (6.86 against push 8.12) and all-to-all (6.90
  // against 8.12-8.17). All-reduce above 1 MiB to 4 MiB: one_shot since its barriers' arrivals are
  // relaxed (session 73, two runs each: 2 MiB 11.0-11.2 against push 11.37, 4 MiB 17.6-17.7
  // against two_shot 17.9-18.0; bench/results/2026-11-30-h200x2-7a3bd2e-s73c5-*); in place, or
  // from an ordinary input, it falls back to push, then two_shot. Reduce-scatter above 2 MiB:
  // direct since its first barriers' arrivals are relaxed (4 MiB 11.04-11.07 against push
  // 11.38-11.39, bench/results/2026-11-30-h200x2-0107eb9-s74c1-*); from an ordinary input push
  // while it fits. The rooted operations (reduce, gather, scatter; session 78) take their
  // unrooted relatives' LL bands (all-reduce's, all-gather's, all-to-all's) and above them the
  // pull or push form auto can choose from the buffer every rank passes (collectives.hpp). 2 x H200
  // (bench/results/2026-11-30-h200x2-97d18fc-s78c2-rooted.json, one run): reduce ll 2.55-3.94 us
  // to 512 KiB (one_shot 4.5-6.4, NCCL 4.5-7.9), one_shot 10.6 / 27.9 / 370 us at 2 / 8 / 128 MiB
  // (NCCL 16.5 / 34.0 / 380); gather ll 2.5-3.8 us to 1 MiB a peer (push 4.7-6.1, direct 5.3-6.7,
  // NCCL 5.5-9.3), direct 10.8 / 29.3 at 4 / 16 MiB (push 10.7 / 28.7, NCCL 14.7 / 35.3); scatter
  // ll 2.4-3.8 (direct 4.8-6.2, push 5.2-6.3, NCCL 5.5-9.3), push 10.8 / 28.8 (direct 10.5 /
  // 29.3, NCCL 14.9 / 35.4). 3+ ranks: unmeasured, the same bands until they are.
  static const char* kText = R"(# op            dtype  ranks  max_bytes     algo
all_reduce      *      2      1048576       ll
all_reduce      *      2      4194304       one_shot
all_reduce      *      2      16777216      two_shot
all_reduce      *      2      1099511627776 two_shot_push
all_reduce      *      *      1048576       ll
all_reduce      *      *      8388608       two_shot
all_reduce      *      *      1099511627776 nccl
reduce_scatter  *      2      2097152       ll
reduce_scatter  *      2      1099511627776 direct
reduce_scatter  *      *      262144        ll
reduce_scatter  *      *      4194304       push
reduce_scatter  *      *      16777216      nccl
reduce_scatter  *      *      268435456     direct
reduce_scatter  *      *      1099511627776 nccl
all_gather      *      2      2097152       ll
all_gather      *      2      1099511627776 push
all_gather      *      *      2097152       ll
all_gather      *      *      67108864      push
all_gather      *      *      1099511627776 direct
broadcast       *      2      1048576       ll
broadcast       *      2      1099511627776 push
broadcast       *      *      262144        ll
broadcast       *      *      1099511627776 nccl
all_to_all      *      2      2097152       ll
all_to_all      *      2      1099511627776 push
all_to_all      *      *      262144        ll
all_to_all      *      *      67108864      push
all_to_all      *      *      268435456     direct
all_to_all      *      *      1099511627776 nccl
all_to_all_v    *      *      1099511627776 ll
reduce          *      2      1048576       ll
reduce          *      2      1099511627776 one_shot
reduce          *      *      262144        ll
reduce          *      *      1099511627776 one_shot
gather          *      2      2097152       ll
gather          *      2      1099511627776 direct
gather          *      *      2097152       ll
gather          *      *      1099511627776 direct
scatter         *      2      2097152       ll
scatter         *      2      1099511627776 push
scatter         *      *      2097152       ll
scatter         *      *      1099511627776 push
)";
  return parse(kText, "built-in table");
}

TuningTable TuningTable::parse(const std::string& text, const std::string& origin) {
  TuningTable t;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream ls(line);
    std::string op, dtype, ranks, maxb, algo, extra;
    if (!(ls >> op)) continue;
    const std::string where = origin + ":" + std::to_string(lineno) + ": ";
    if (!(ls >> dtype >> ranks >> maxb >> algo) || (ls >> extra))
      fail(where + "expected 'op dtype nranks max_bytes algo', got '" + line + "'");
    Entry e{};
    try {
      e.op = parse_coll(op);
      e.dtype = dtype == "*" ? -1 : static_cast<int>(parse_dtype(dtype));
      e.nranks = ranks == "*" ? 0 : static_cast<int>(detail::parse_int(ranks.c_str(), "nranks", 1, 4096));
      e.max_bytes = static_cast<size_t>(std::stoull(maxb));
      e.algo = parse_algo(algo);
    } catch (const InvalidArgument& err) {
      fail(where + err.what());
    } catch (const std::exception&) {
      fail(where + "max_bytes '" + maxb + "' is not a number");
    }
    if (e.algo == Algo::kAuto) fail(where + "'auto' is not an algorithm a table can name");
    t.entries_.push_back(e);
  }
  return t;
}

TuningTable TuningTable::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail("cannot read the tuning table '" + path + "' (SYMMEM_TUNING_FILE / CommOptions::tuning_file)");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), path);
}

std::string TuningTable::to_text() const {
  std::ostringstream out;
  out << "# op dtype nranks max_bytes algo (first match wins)\n";
  for (const Entry& e : entries_)
    out << coll_name(e.op) << " " << (e.dtype < 0 ? "*" : dtype_name(static_cast<DataType>(e.dtype))) << " "
        << (e.nranks == 0 ? "*" : std::to_string(e.nranks)) << " " << e.max_bytes << " " << algo_name(e.algo) << "\n";
  return out.str();
}

Algo TuningTable::lookup(CollOp op, DataType dtype, int nranks, size_t bytes, Algo skip) const {
  for (const Entry& e : entries_)
    if (e.op == op && (e.dtype < 0 || e.dtype == static_cast<int>(dtype)) && (e.nranks == 0 || e.nranks == nranks) &&
        bytes <= e.max_bytes && e.algo != skip)
      return e.algo;
  return Algo::kNccl;
}

namespace detail {
bool ll_narrow_only(CollOp op, DataType dtype) {
  return coll_reducing(op) && valid_dtype(dtype) && dtype_size(dtype) == 8;
}
size_t ll_capacity_for(CollOp op, DataType dtype, size_t ll_max_bytes) {
  return ll_narrow_only(op, dtype) ? ws::ll_lines(ll_max_bytes) * ws::kLLNarrow : ll_max_bytes;
}
std::string algo_unfit(CollOp op, Algo a, bool in_sym, bool out_sym, bool in_place, size_t ll_bytes, size_t ll_cap, int nranks,
                       DataType dtype) {
  const bool reducing = op == CollOp::kAllReduce || op == CollOp::kReduceScatter;
  switch (a) {
    case Algo::kAuto: return "";
    case Algo::kNccl: return op == CollOp::kAllToAllV ? "NCCL has no all-to-all-v with counts on the GPU" : "";
    case Algo::kLL: {
      if (op == CollOp::kAllToAllV) return "";  // small splits as LL lines, large ones direct, decided on the GPU
      const size_t cap = ll_capacity_for(op, dtype, ll_cap);
      if (ll_bytes > cap)
        return "ll carries at most " + std::to_string(cap) + " bytes per peer (CommOptions::ll_max_bytes" +
               (cap != ll_cap ? std::string(", in 8-byte lines for ") + dtype_name(dtype) : std::string()) + "); this call needs " +
               std::to_string(ll_bytes);
      return "";
    }
    case Algo::kOneShot:
      if (op != CollOp::kAllReduce && op != CollOp::kReduce) return "one_shot is an all-reduce and reduce algorithm";
      if (!in_sym) return "one_shot reads peers' inputs directly: pass an input from Communicator::alloc";
      // (reduce in place: only the root writes, and only the root reads its own input)
      if (in_place && op == CollOp::kAllReduce) return "one_shot cannot run in place (peers still read the input it overwrites)";
      return "";
    case Algo::kTwoShot:
      if (op != CollOp::kAllReduce) return "two_shot is an all-reduce algorithm";
      if (!in_sym || !out_sym) return "two_shot needs input and output from Communicator::alloc";
      return "";
    case Algo::kPush:
      if (op == CollOp::kAllToAllV) return "all_to_all_v has direct only";
      if (op == CollOp::kReduce) return "reduce has ll, one_shot and nccl";
      if (!reducing) {
        if (!out_sym) return "push writes into peers' outputs: pass an output from Communicator::alloc";
        if (in_place && op == CollOp::kAllToAll) return "push all_to_all cannot run in place";
        return "";
      }
      if (ll_bytes > 2 * ll_cap)
        return "push carries at most " + std::to_string(2 * ll_cap) + " bytes per peer (2 x CommOptions::ll_max_bytes); this call needs " +
               std::to_string(ll_bytes);
      return "";
    case Algo::kTwoShotPush:
      if (op != CollOp::kAllReduce) return "two_shot_push is an all-reduce algorithm";
      if (nranks != 0 && nranks != 2) return "two_shot_push is for 2 ranks; use two_shot";
      if (!out_sym) return "two_shot_push writes into peers' outputs: pass an output from Communicator::alloc";
      if (in_place) return "two_shot_push cannot run in place (the peer's half lands in the output first)";
      return "";
    case Algo::kDirect:
      if (reducing && op == CollOp::kAllReduce) return "all_reduce has one_shot and two_shot, not direct";
      if (op == CollOp::kReduce) return "reduce has ll, one_shot and nccl (one_shot is its pull form)";
      if (!in_sym) return "direct reads peers' inputs directly: pass an input from Communicator::alloc";
      if (in_place && op == CollOp::kAllToAll) return "direct all_to_all cannot run in place";
      return "";
  }
  return "unknown algorithm";
}
Algo choose_algo(const TuningTable& table, CollOp op, DataType dtype, int nranks, size_t bytes, bool in_sym, bool out_sym,
                 bool in_place, bool have_nccl, size_t ll_cap) {
  const size_t ll = coll_chunked(op) ? bytes / nranks : bytes;
  auto fits = [&](Algo a) {
    if (a == Algo::kNccl && !have_nccl) return false;
    return algo_unfit(op, a, in_sym, out_sym, in_place, ll, ll_cap, nranks, dtype).empty();
  };
  Algo a = table.lookup(op, dtype, nranks, bytes);
  // LL that cannot carry the size only because its lines are narrow (reductions of 8-byte elements
  // hold two thirds of its bytes): the table's band past LL's, as if the size were there (2 x H200,
  // session 77, 1 MiB all-reduce of int64 / double: one_shot 7.91-7.97 us, push 8.04-8.26, NCCL
  // 13.3; reduce-scatter of double at 2 MiB: direct 7.81, push 8.12).
  if (a == Algo::kLL && ll_narrow_only(op, dtype) && ll <= ll_cap && !fits(a)) a = table.lookup(op, dtype, nranks, bytes, Algo::kLL);
  if (fits(a)) return a;
  // one_shot that cannot run (in place, or an ordinary input): LL or push where they fit, as the
  // table chose before one_shot took their sizes (session 73), then the zero-copy paths below; a
  // direct reduce-scatter from an ordinary input likewise push, as before session 74.
  if (a == Algo::kOneShot)
    for (Algo b : {Algo::kLL, Algo::kPush})
      if (fits(b)) return b;
  if (a == Algo::kDirect && op == CollOp::kReduceScatter && fits(Algo::kPush)) return Algo::kPush;
  // The table's choice cannot run with these buffers (or NCCL is absent: ranks share a GPU). A
  // choice above LL's range falls back to the zero-copy paths first; then LL; then NCCL; then push
  // (reductions through the workspace).
  if (a != Algo::kLL)
    for (Algo b : {Algo::kTwoShot, Algo::kDirect})
      if (fits(b)) return b;
  if (a != Algo::kLL && op != CollOp::kAllReduce && op != CollOp::kReduceScatter && fits(Algo::kPush)) return Algo::kPush;
  for (Algo b : {Algo::kLL, Algo::kNccl, Algo::kPush})
    if (fits(b)) return b;
  return Algo::kNccl;  // the caller reports why it cannot run
}

// A line a thread in one block where they fit (no election in seq_end), else ~64 lines a block
// (more SMs polling at once where the kernel spreads its lines over the blocks, device::
// grid_index_spread: all-gather, broadcast, scatter; by grid_index the first lines / 512 blocks
// take them all), up to 128 blocks (session 10, 4 x H200: 128 against 64 blocks took 2
// ranks' 512 KiB all-reduce from 5.99 to 5.07 us, 1 MiB from 8.32 to 8.04, and changed nothing at
// 4 ranks; session 11, 4 x H100: 64 lines a block against 128 took all-reduce at 8-64 KiB
// 0.02-0.14 us lower at 2 and 4 ranks, the same above; 256 lines a block was slower; 16 or 32 were
// slower everywhere from 128 KiB in session 10; one block up to 1024 or 2048 lines was up to 2x
// slower at 8-16 KiB). At 2 ranks up to two blocks an SM, but for broadcast (session 74, 2 x H200,
// against 128 blocks in one call, two runs each: 128 blocks of 512 threads hold 65536 lines, 768
// KiB of wide lines, and a larger message took a second pass; all-reduce 1 MiB 7.05 us against
// 8.20-8.25, reduce-scatter / all-gather / all-to-all 2 MiB (1 MiB a peer) 7.15 / 6.86 / 6.90
// against 8.57 / 7.15 / 7.22, 256 KiB 0.1-0.16 us faster, the rest level; broadcast, where the
// root alone sends data, 0.1-0.15 us slower at 256 KiB - 1 MiB;
// bench/results/2026-11-30-h200x2-05c2118-s74c3-*); the other rooted operations, where one rank
// alone sends or receives data, as broadcast. Two 512-thread blocks fit an SM because no
// LL kernel uses more than 64 registers (ptxas -v, sm_90). Teams of 3+ ranks keep 128 blocks until
// measured: SYMMEM_LL_WIDE_GRID_MAX_RANKS (compile-time, so every rank alike; default 2) is the
// largest team that takes the wide grid, for an A/B tree (`tools/ab.sh define`).
#ifndef SYMMEM_LL_WIDE_GRID_MAX_RANKS
#define SYMMEM_LL_WIDE_GRID_MAX_RANKS 2
#endif
int ll_grid(size_t lines, int nranks, CollOp op, int sms, int threads) {
  if (lines <= static_cast<size_t>(threads)) return 1;
  constexpr size_t kLinesPerBlock = 64;
  const size_t b = (lines + kLinesPerBlock - 1) / kLinesPerBlock;
  const bool wide = nranks >= 2 && nranks <= SYMMEM_LL_WIDE_GRID_MAX_RANKS && !coll_rooted(op);
  const int cap = wide ? 2 * sms : std::min(sms, 128);
  return static_cast<int>(std::clamp<size_t>(b, 1, static_cast<size_t>(std::max(cap, 1))));
}

// A function of the size and team size alone (and the workspace layout, the same on every rank):
// every rank runs the same form.
size_t ll_two_shot_chunk(size_t bytes, int nranks, size_t slot_lines, DataType dtype) {
  constexpr size_t kMinBytes = 256 * 1024;  // two-shot above this
  if (nranks < 3 || bytes <= kMinBytes || ll_narrow_only(CollOp::kAllReduce, dtype)) return 0;
  const size_t n = static_cast<size_t>(nranks);
  const size_t chunk = ((bytes + n - 1) / n + 7) / 8 * 8;  // whole elements of every type
  if ((n - 1) * chunk >= bytes) return 0;                  // every chunk holds data: every peer gets lines
  if (2 * ws::ll_lines(chunk) > slot_lines) return 0;      // both halves fit the slot
  return chunk;
}
}  // namespace detail

}  // namespace symmem
