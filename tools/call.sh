#!/usr/bin/env bash
# One device call: build the work tree's symmem-bench, symmem_gpu_tests and symmem-run and, in
# parallel, the symmem-bench of every tree `tools/ab.sh prepare REF` left in .deps/ab/, then run
# the steps (bash) given as a file argument or in $STEPS, with these helpers:
#   B LABEL SHAPES [VAR=value...]   symmem-bench moe over SHAPES (comma-separated names)
#   T RANKS RPG [VAR=value...]      symmem_gpu_tests under $FILTER (default Moe*) by symmem-run,
#                                   RPG ranks a GPU (each rank's program run under $WRAP where set,
#                                   e.g. compute-sanitizer and its options); its summary lines go to summary.txt
#   O LABEL [VAR=value...]          symmem-bench overlap (SMI_LOG=1: each GPU's power, SM clock and
#                                   temperature every 200 ms beside it, r/smi-LABEL.csv, medians printed)
#   TW LABEL                        each row of r/LABEL.json's instances (SYMMEM_OVERLAP_TWINS): times, SM clocks
#   OAB LABEL TREE TREE_LABEL [VAR=value...]  O of the work tree and of .deps/ab/TREE alternating, twice
#   RT RANKS RPG [VAR=value...]     T of the random interleaving (Random.*), then each rank's line of what ran in it
#   MT RANKS RPG [VAR=value...]     T of the random MoE cases (Moe.RandomShapesRoutingAndCallForms), then its line of what ran
#   OT RANKS RPG [VAR=value...]     T of the random overlap cases (Overlap.RandomShapesFormsAndCallOrders), then its line
#   DT RANKS RPG [VAR=value...]     T of the random device-API traffic (DeviceApi.RandomTraffic*), then each team's line
#   ST RANKS RPG [VAR=value...]     T of the random stream rounds (Stream.RandomPutsGetsAndSignalsBetweenEveryPair), then its line
#   L SECONDS                       SECONDS or what is left before 565 s into the call, if that is over 10 s (else fails):
#                                   t=$(L 60) && TLIMIT=$t T ...
#   tests_passed                    true when every T so far passed (else prints that timing is skipped)
#   COLLTESTS                       T of the collective tests at 1, 2, 3 and 4 ranks (2 GPUs), 2 on one, and with the debug checks
#   A2AV_STAMPS TREE...             all_to_all_v at 1 KiB with each stamps-built .deps/ab TREE: its stamp lines
#   A LABEL OP [ARGS...]            symmem-bench OP (a collective); prints size:symmem/nccl
#   AAB PREFIX "TREE..." OP [ARGS...]  A of the work tree and of each .deps/ab TREE alternating, twice
#   P2P LABEL [ARGS...]             symmem-bench p2p ARGS: its latency rows (put_signal / put+release / ll / signal /
#                                   signal_relaxed / relaxed pair us, wrong) on one line
#   NVSH [ARGS...]                  NVSHMEM's p2p pair once (tools/peers.sh nvshmem ARGS): put_signal symmem/NVSHMEM by size
#   H ARGS...                       symmem-hgemm-probe ARGS (its checks and times; fails the && chain on an error)
#   PB BIN LABEL ARGS...            the probe binary BIN (e.g. a .deps/ab tree's) with ARGS: its check and time line
#   S                               the SASS of every cubin tools/cubins.sh left in .deps/sass: counts printed, text in $OUT/sass.tgz
#   SUITE12 [REGEX]                 the 1- and 2-GPU ctest tiers (or those REGEX names) (gpu_1rank, multigpu at 2 ranks, the fault, own-GEMM,
#                                   Python and example tiers, 3 ranks on 2 GPUs) by tools/gpu_run.sh, stopped after SUITE_STOP_S
#                                   (default 440; ~300 s on session 71's host (the 4-rank own-GEMM tier 107 s), 3 ranks
#                                   79 s more in session 72, more on a slow one); log suite.log
#   PYBUILD                         the Python package into build/python (python -m symmem.bench, pytest)
#   PYN LABEL RANKS SECONDS ARGS... launch.py RANKS --ranks-per-gpu RANKS ARGS (e.g. test_gpu.py) under a time limit: its summary
#   MAINJOB [BEFORE_S]              the README's main job (symmem-bench, no suite) if the call is under BEFORE_S s in (default
#                                   530: it takes ~15 s at 2 GPUs, session 71), bounded to end by 560 s; r/main-job.json, its tables' first 60 lines
#                                   and its closing lines (the fastest method by size) printed
#   RS GLOB [KEY...]                each row of r/GLOB.json (symmem-bench's JSON): its size and KEY_us (default push,
#                                   direct) beside nccl_us, one line a file
#   PR LABEL [VAR=value...] ARGS... symmem-hgemm-probe ARGS under HGEMM_T=1 HGEMM_SUSTAIN=3 and the VARs (e.g.
#                                   SYMMEM_BENCH_IDLE_US=1000): its time lines, JSON appended to r/probe-LABEL.json
#   NM LABEL METRICS [VAR=value...] ARGS...  Nsight Compute (clocks free) of the probe's kernels named by NCU_K (a regex,
#                                   default hopper_gemm* and cuBLASLt's), NCU_SKIP and NCU_COUNT (0 and 2) of its
#                                   check launches: one line of METRICS' summary a launch
#   NSRC LABEL [VAR=value...] ARGS...  as NM with the warp stall samples by instruction (tools/ncu_summary.py source)
# BIN=<tree under .deps/ab> before B, O or A runs that tree's symmem-bench instead (a baseline
# measured beside the change, in the same call); before T that tree's tests, which its build makes
# where AB_TARGETS="symmem_gpu_tests symmem-run" (TLIMIT: T's time limit, default 150 s). Each
# run's JSON is r/LABEL.json; the JSON, the build logs, summary.txt, suite.log (if a step
# writes $OUT/suite.log) and the whole log of every failed T come back in one archive under $OUT. Carry [".deps"]; COMMIT=<sha> labels the work tree's runs (the device copy's git
# HEAD is stale); WORK_TARGETS=symmem-bench builds the work tree's bench alone (a timing-only call);
# CMAKE_ARGS adds to the work tree's configure (e.g. -DSYMMEM_SANITIZE=address).
# Multicast stays off in every child (lib.sh).
#   COMMIT=<sha> bash tools/call.sh steps.sh
# Session 27, 4 x H100: the build ~90 s (two trees ~100, three ~180); Moe* at 4, 3, 2 and 8 on 4
# ranks ~20 s in all; a B run of the decode-size shapes ~5 s; an A run to 256 KiB ~4 s.
. "$(dirname "$0")/lib.sh"
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
if [ $# -gt 0 ]; then STEPS=$(cat "$1") || exit 1; fi
kind=$(gpu_kind); C=${COMMIT:-x}
# The device command: on a machine without GPUs it would build every tree here for nothing (session 84).
nvidia-smi -L 2>/dev/null | grep -q "^GPU" || { echo "tools/call.sh: no GPU here; it is the device tool's command (run it through \`run\`, carry [\".deps\"])" >&2; exit 2; }
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT/r"; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
for d in .deps/ab/*/; do
  [ -d "$d" ] || continue; t=${d%/}; nm=$(basename "$t")
  ( cmake -S "$t" -B "$t/build-ab" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_GTEST_SOURCE="$PWD/.deps/googletest" \
      -DSYMMEM_BUILD_PYTHON=OFF > "$OUT/build-$nm.log" 2>&1 &&
    cmake --build "$t/build-ab" -j 12 --target symmem-bench ${AB_TARGETS:-} >> "$OUT/build-$nm.log" 2>&1 ) &
done
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_GTEST_SOURCE="$PWD/.deps/googletest" -DSYMMEM_BUILD_PYTHON=OFF ${CMAKE_ARGS:-} > "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target ${WORK_TARGETS:-symmem-bench symmem_gpu_tests symmem-run} ${EXTRA_TARGETS:-} >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
wait
for d in .deps/ab/*/; do [ ! -d "$d" ] || [ -x "${d}build-ab/bench/symmem-bench" ] || { echo "build of $d failed"; tail -20 "$OUT/build-$(basename "$d").log"; }; done
echo "== built at $(el) s on $kind"; nvidia-smi -L
bench_bin() {  # the symmem-bench binary and the commit label of $BIN's tree (or the work tree)
  if [ -n "${BIN:-}" ]; then echo ".deps/ab/$BIN/build-ab/bench/symmem-bench $BIN"; else echo "build/bench/symmem-bench $C"; fi
}
B() {
  local label=$1 shapes=$2 bin c; shift 2
  read -r bin c <<< "$(bench_bin)"
  env "$@" SYMMEM_MOE_SHAPES="$shapes" timeout 150 "$bin" moe --kind "$kind" --commit "$c" --json "$OUT/r/$label.json" > "$OUT/m.log" 2>&1
  echo "== $label ($*) at $(el) s:"; grep -E "^ +[a-z]|^# trace" "$OUT/m.log" | grep -v " shape " || tail -5 "$OUT/m.log"
}
T() {
  local n=$1 rpg=$2 b=build tree=${COMMIT:-work}; shift 2
  if [ -n "${BIN:-}" ]; then b=.deps/ab/$BIN/build-ab; tree=$BIN; fi
  env "$@" timeout "${TLIMIT:-150}" $b/symmem-run -n "$n" --ranks-per-gpu "$rpg" ${WRAP:-} $b/tests/symmem_gpu_tests --gtest_filter="${FILTER:-Moe*}" > "$OUT/t.log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || cp "$OUT/t.log" "$OUT/t-failed-$(el)s.log"  # (a failed run's whole log comes back)
  echo "== tests ${FILTER:-Moe*} of $tree at $n ranks, $rpg a GPU ($*) rc $rc at $(el) s:" | tee -a "$OUT/summary.txt"
  # the verdict lines with the rank taken off, counted (a count short of n, or two lines, tells the
  # ranks apart); each failed test once with its count of ranks, then the first lines of its reasons
  grep -aE "\[  PASSED  \]|\[  FAILED  \]|\[  SKIPPED \] [0-9]" "$OUT/t.log" | grep -av " ms)$" | sed -E 's/^\[rank [0-9]+\] //' |
    sort | uniq -c | head -30 | tee -a "$OUT/summary.txt"
  grep -a -A1 -E "Failure$" "$OUT/t.log" | grep -avE "Failure$|^--$" | sed -E 's/^\[rank [0-9]+\] //; s/rank [0-9]+/rank R/g' |
    sort | uniq -c | sort -rn | head -6 | cut -c1-400
  grep -aE "rank [0-9]+:.*(error|timed out)" "$OUT/t.log" | head -6
  # a run stopped by its limit: the test each rank was in
  [ $rc -ne 124 ] || grep -a "\[ RUN      \]" "$OUT/t.log" | awk '{l[$2]=$0} END{for (r in l) print "   last started: " l[r]}' | sort | tee -a "$OUT/summary.txt"
}
RT() {
  FILTER='Random.*' T "$@"
  grep -h "random interleaving" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | head -6
}
MT() {
  FILTER='Moe.RandomShapesRoutingAndCallForms' T "$@"
  grep -h "random moe" "$OUT/t.log" | head -2
}
DT() {
  FILTER='DeviceApi.RandomTraffic*' T "$@"
  grep -h "random device traffic" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | head -4
}
L() {
  local left=$((565 - $(el)))
  [ "$left" -gt 10 ] || { echo "== skipped at $(el) s: the call's time is spent" | tee -a "$OUT/summary.txt" >&2; return 1; }
  echo $(( $1 < left ? $1 : left ))
}
OT() {
  FILTER='Overlap.RandomShapesFormsAndCallOrders' T "$@"
  grep -h "random overlap" "$OUT/t.log" | head -2
}
ST() {
  FILTER='Stream.RandomPutsGetsAndSignalsBetweenEveryPair' T "$@"
  grep -h "random stream" "$OUT/t.log" | head -2
}
smi_start() {  # SMI_LOG=1: every GPU's power, clock and temperature each 200 ms into r/smi-LABEL.csv (reading only)
  [ "${SMI_LOG:-0}" = 1 ] || return 0
  nvidia-smi --query-gpu=timestamp,index,power.draw,power.limit,clocks.sm,temperature.gpu --format=csv,noheader -lms 200 \
    > "$OUT/r/smi-$1.csv" 2>/dev/null &
  SMI_PID=$!
  disown "$SMI_PID"  # (a step's bare `wait` for its own background jobs must not wait for the log: session 64 lost a call so)
}
smi_stop() {  # prints each GPU's median SM clock and power over the run
  [ -n "${SMI_PID:-}" ] || return 0
  kill "$SMI_PID" 2>/dev/null; wait "$SMI_PID" 2>/dev/null; SMI_PID=
  local f="$OUT/r/smi-$1.csv" g n clk pw
  for g in $(awk -F', *' '{print $2}' "$f" | sort -un); do
    n=$(awk -F', *' -v g="$g" '$2 == g' "$f" | wc -l)
    clk=$(awk -F', *' -v g="$g" '$2 == g {print $5 + 0}' "$f" | sort -n | sed -n "$(( (n + 1) / 2 ))p")
    pw=$(awk -F', *' -v g="$g" '$2 == g {print $3 + 0}' "$f" | sort -n | sed -n "$(( (n + 1) / 2 ))p")
    echo "   GPU $g: median SM clock $clk MHz, power $pw W ($n samples)"
  done
}
O() {
  local label=$1 bin c; shift
  read -r bin c <<< "$(bench_bin)"
  smi_start "$label"
  env "$@" timeout 200 "$bin" overlap --kind "$kind" --commit "$c" --json "$OUT/r/$label.json" > "$OUT/o.log" 2>&1
  local rc=$?
  echo "== $label ($*) rc $rc at $(el) s:"; grep -vE "^\[rank [1-9]" "$OUT/o.log" | tail -30
  smi_stop "$label"
}
TW() {  # TW LABEL: each row's instances of r/LABEL.json (SYMMEM_OVERLAP_TWINS): times and SM clocks
  python3 - "$OUT/r/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    print("  %-12s M %6s floor %7.1f  main [%s] @ [%s]  alt [%s] @ [%s]" % (r["algo"], r["bytes"], r.get("gemm_alone_us", -1),
          r.get("overlap_twins_us", "-"), r.get("overlap_twins_mhz", "-"), r.get("alt_twins_us", "-"), r.get("alt_twins_mhz", "-")))
PY
}
COLLTESTS() {  # the collective tests (Collectives, Rooted, Stream, DeviceApi) at 1, 2, 3 and 4 ranks on 2 GPUs, 2 on one, and with the debug checks
  local f="Collectives.*:Collectives/*:Rooted.*:Stream.*:DeviceApi.*" r
  for r in "1 1" "2 1" "3 2" "2 2"; do FILTER=$f T $r; done
  FILTER=$f TLIMIT=200 T 4 2 SYMMEM_TIMEOUT_MS=100000
  FILTER="DebugChecks.*:Collectives.*:Collectives/*:Rooted.*" T 2 2 SYMMEM_DEBUG_CHECKS=1
}
A2AV_STAMPS() {  # A2AV_STAMPS TREE...: all_to_all_v at 1 KiB with each .deps/ab TREE (built with SYMMEM_A2AV_STAMPS=1), its stamp lines
  local t
  for t in "$@"; do
    BIN=$t A "$t-1K" all_to_all_v -b 1K -e 1K -n 100
    grep 'a2av stamps' "$OUT/a.log" | tail -4
  done
}
tests_passed() {  # every T so far passed (else says so: steps that time only tested code skip their timing)
  ! grep -q "FAILED\|rc [1-9]" "$OUT/summary.txt" || { echo "== tests failed: no timing"; return 1; }
}
OAB() {  # OAB LABEL TREE TREE_LABEL [VAR=value...]: O of the work tree and of .deps/ab/TREE's alternating, twice (mm+rs lines)
  local label=$1 tree=$2 tlabel=$3 i; shift 3
  for i in 1 2; do
    O "$label-$i" "$@" | grep -E "^==|mm\\+rs"
    BIN=$tree O "$tlabel-$i" "$@" | grep -E "^==|mm\\+rs"
  done
}
AAB() {  # AAB PREFIX "TREE..." OP [ARGS...]: A of the work tree (PREFIX-work-i) and of each .deps/ab TREE (PREFIX-TREE-i) alternating, twice
  local prefix=$1 trees=$2 op=$3 i t; shift 3
  for i in 1 2; do
    A "$prefix-work-$i" "$op" "$@"
    for t in $trees; do BIN=$t A "$prefix-$t-$i" "$op" "$@"; done
  done
}
A() {
  local label=$1 op=$2 bin c; shift 2
  read -r bin c <<< "$(bench_bin)"
  timeout 120 "$bin" "$op" "$@" --kind "$kind" --commit "$c" --json "$OUT/r/$label.json" > "$OUT/a.log" 2>&1
  echo "== $label ($op $*) rc $? at $(el) s:"; awk '/^ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $10} END{print ""}' "$OUT/a.log"
}
P2P() {  # P2P LABEL [ARGS...]: symmem-bench p2p ARGS of the work tree (or $BIN's), its latency rows on one line
  local label=$1 bin c; shift
  read -r bin c <<< "$(bench_bin)"
  timeout 120 "$bin" p2p "$@" --kind "$kind" --commit "$c" --json "$OUT/r/$label.json" > "$OUT/p.log" 2>&1
  local rc=$?
  echo "== $label rc $rc at $(el) s (bytes: put_signal / put+release / ll / signal / signal_relaxed / relaxed pair us, wrong)"
  # (a failed run's reason: session 76 lost one, a kernel past 512 threads' registers, with the log)
  [ $rc -eq 0 ] || { grep -v "^\s*$" "$OUT/p.log" | tail -5; cp "$OUT/p.log" "$OUT/p2p-failed-$label.log"; return; }
  python3 - "$OUT/r/$label.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["op"] == "p2p_latency"]
print("  " + "  ".join("%d:%.2f/%s/%.2f%s w%d" % (r["bytes"], r["symmem_us"], "%.2f" % r["put_then_release_us"] if r.get("put_then_release_us") else "-",
      r.get("ll_put_us") or 0, "/%.2f/%.2f/%.2f" % (r["signal_only_us"], r["signal_relaxed_us"], r.get("relaxed_pair_us", -1)) if r.get("signal_only_us") else "", r.get("wrong", -1)) for r in rows))
PY
}
NVSH() {  # NVSH [ARGS...]: NVSHMEM's p2p pair once beside the work tree's (tools/peers.sh nvshmem ARGS), put_signal by size, the signal rows
  NVSHMEM_PAIRS=1 COMMIT=$C OUT=$OUT bash tools/peers.sh nvshmem "$@"
  echo "== nvshmem rc $? at $(el) s"
  python3 -c "
import json; d = json.load(open('$OUT/r/p2p-vs-nvshmem-1.json'))
lat = [r for r in d['ratios'] if r['op'] == 'p2p_latency']
print('  put_signal ' + ' '.join('%d:%.2f/%.2f' % (r['bytes'], r['symmem_us'], r['nvshmem_us']) for r in lat if r['algo'] == 'put_signal'))
print('  ' + ' '.join('%s %.2f/%.2f' % (r['algo'], r['symmem_us'], r['nvshmem_us']) for r in lat if r['algo'] != 'put_signal'))"
}
H() {  # symmem-hgemm-probe ARGS (EXTRA_TARGETS=symmem-hgemm-probe) under the HGEMM_* set, bounded at 60 s
  echo "== hgemm-probe $* at $(el) s"
  timeout 60 build/symmem-hgemm-probe "$@" > "$OUT/p.log" 2>&1; local rc=$?
  grep -E "gemm_t|first bad|error|usage|Error" "$OUT/p.log"; echo "rc $rc"
  [ $rc -eq 0 ] || { tail -5 "$OUT/p.log"; return 1; }
}
PB() {  # PB PROBE-BINARY LABEL ARGS...: that binary's (a tree's symmem-hgemm-probe) check and time line, JSON r/probe-LABEL.json
  local bin=$1 label=$2; shift 2
  HGEMM_SUSTAIN=10 timeout 60 "$bin" "$@" --json "$OUT/r/probe-$label.json" > "$OUT/p.log" 2>&1
  echo "== probe $label $* rc $?"; grep -E "^gemm|first bad|error" "$OUT/p.log"
}
S() {  # S: the SASS of .deps/sass/*.cubin (tools/cubins.sh) into $OUT/sass.tgz, each one's counts printed
  local cuobj f
  cuobj=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  mkdir -p "$OUT/sass"
  for f in .deps/sass/*.cubin; do [ -e "$f" ] && "$cuobj" -sass "$f" > "$OUT/sass/$(basename "$f" .cubin).sass" 2>&1; done
  for f in "$OUT"/sass/*.sass; do
    [ -e "$f" ] && echo "$(basename "$f"): $(grep -c HGMMA "$f") HGMMA, $(grep -c R2UR "$f") R2UR, $(grep -c 'UIADD3.X' "$f") UIADD3.X, $(grep -cE '^ +/\*[0-9a-f]{4,}\*/' "$f") instructions"
  done
  tar czf "$OUT/sass.tgz" -C "$OUT" sass && rm -rf "$OUT/sass"
}
SUITE12() {
  COMMIT=$C SYMMEM_CTEST_STOP_S=${SUITE_STOP_S:-440} tools/gpu_run.sh --no-bench \
    --ctest-args "-R ${1:-gpu_1rank|multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm_2ranks_1gpu|multigpu_own_gemm_4ranks_2gpus|python_gpu_2gpus|python_example_tp_mlp_2gpus}" > "$OUT/suite.log" 2>&1
  echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" "$OUT/suite.log" | tail -12
  grep -E "\[  PASSED  \]|\[  FAILED  \]|[0-9]+ passed|[0-9]+ failed" "$OUT/suite.log" | sort | uniq -c | head -30
}
PYBUILD() {  # the Python package into build/python (for python -m symmem.bench and the Python tests); prints when built
  cmake -S . -B build -DSYMMEM_BUILD_PYTHON=ON >> "$OUT/build.log" 2>&1 &&
    cmake --build build -j "$(nproc)" --target symmem_python symmem_python_files >> "$OUT/build.log" 2>&1 || echo "python build failed"
  echo "== python built at $(el) s"
}
PYK() {  # LABEL SECONDS 'K EXPRESSION' RANKS...: the Python tests pytest's -k selects, at each of RANKS on one GPU
  # (PYN LABEL_n), each run bounded by L SECONDS, then the random tests' summaries (after pytest's dots) and any errors
  local label=$1 secs=$2 expr=$3 n t; shift 3
  for n in "$@"; do
    t=$(L "$secs") || return 0
    PYTEST_ADDOPTS="-s -k '$expr' -o faulthandler_timeout=$((t - 5))" PYN "${label}_$n" "$n" "$t" test_gpu.py
    grep -aoh "random [^:]*: [0-9]* [a-z]* ran and checked [^;]*\|[A-Za-z]*Error: .*\|assert .*" "$OUT/${label}_$n.log" | cut -c1-1500 | head -8
  done
}
PYN() {  # LABEL RANKS SECONDS ARGS...: tests/python/launch.py RANKS --ranks-per-gpu RANKS ARGS (PYBUILD first), its summary lines
  local label=$1 n=$2 t=$3; shift 3
  PYTHONPATH=$PWD/build/python timeout "$t" python3 tests/python/launch.py "$n" --ranks-per-gpu "$n" "$@" > "$OUT/$label.log" 2>&1
  echo "== $label rc $? at $(el) s:" | tee -a "$OUT/summary.txt"
  grep -E "[0-9]+ (passed|failed|skipped)|FAILED|Error|error:" "$OUT/$label.log" | sort | uniq -c | head -20 | tee -a "$OUT/summary.txt"
  { echo "==== $label"; cat "$OUT/$label.log"; } >> "$OUT/suite.log"  # (suite.log comes back in the archive)
}
MAINJOB() {
  [ "$(el)" -lt "${1:-530}" ] || { echo "== the main job skipped: $(el) s in"; return 0; }
  echo "== symmem-bench (the main job) at $(el) s"
  timeout $(( 560 - $(el) )) build/bench/symmem-bench --kind "$kind" --commit "$C" --json "$OUT/r/main-job.json" > "$OUT/main-job.log" 2>&1
  echo "rc $? at $(el) s"; grep -vE "^\[rank [1-9]" "$OUT/main-job.log" | grep -E "^#|^ +[0-9]+ " | head -60
  grep -A8 "fastest method" "$OUT/main-job.log"
}
RS() {
  local glob=$1; shift
  python3 - "$OUT/r" "$glob" "${@:-push direct}" <<'PY'
import glob, json, os, sys
keys = " ".join(sys.argv[3:]).split() or ["push", "direct"]
for f in sorted(glob.glob(os.path.join(sys.argv[1], sys.argv[2] + ".json"))):
    rows = json.load(open(f)).get("rows", [])
    size = lambda b: "%dM" % (b >> 20) if b >= 1 << 20 else "%dK" % (b >> 10)
    print("%-20s" % os.path.basename(f)[:-5], "  ".join("%s %s nccl %.2f" % (size(r["bytes"]), " ".join("%s %.2f" % (k, r[k + "_us"]) for k in keys if k + "_us" in r), r["nccl_us"]) for r in rows))
PY
}
split_env() {  # the leading VAR=value words of "$@" into ENVS, the rest into ARGS
  ENVS=(); ARGS=()
  while [ $# -gt 0 ] && [[ $1 == [A-Z_]*=* ]]; do ENVS+=("$1"); shift; done
  ARGS=("$@")
}
PR() {
  local label=$1; shift; split_env "$@"
  echo "== probe $label ${ENVS[*]} ${ARGS[*]} at $(el) s"
  env HGEMM_T=1 HGEMM_SUSTAIN=3 "${ENVS[@]}" timeout 100 build/symmem-hgemm-probe "${ARGS[@]}" --json "$OUT/r/probe-$label.json" 2>&1 |
    grep -E "gemm_t|error|usage|bad|left" | sed 's/(worst rel err [^)]*)//; s/ (algo [^)]*)//'
}
ncu_probe() {  # ncu_probe LABEL NCU-ARGS... -- [VAR=value...] PROBE-ARGS...: the report $OUT/LABEL.ncu-rep
  local label=$1 n=(); shift
  while [ "$1" != "--" ]; do n+=("$1"); shift; done; shift; split_env "$@"
  env SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_SUSTAIN=1 "${ENVS[@]}" timeout 150 ncu --clock-control none -k regex:"${NCU_K:-nvjet|hopper_gemm}" \
    --launch-skip "${NCU_SKIP:-0}" -c "${NCU_COUNT:-2}" "${n[@]}" -o "$OUT/$label" -f build/symmem-hgemm-probe "${ARGS[@]}" > "$OUT/ncu-$label.log" 2>&1
  local rc=$?; echo "== ncu $label ${ENVS[*]} ${ARGS[*]} rc $rc at $(el) s"; [ $rc -eq 0 ] || tail -3 "$OUT/ncu-$label.log"
}
NM() {
  local label=$1 ms=$2; shift 2
  ncu_probe "$label" --metrics "$ms" -- "$@"
  ncu -i "$OUT/$label.ncu-rep" --page raw --csv --metrics "$ms" > "$OUT/r/ncu-$label.csv" 2>&1
  python3 tools/ncu_summary.py metrics "$OUT/r/ncu-$label.csv"
}
NSRC() {
  local label=$1; shift
  ncu_probe "$label" --section SourceCounters --section WarpStateStats --metrics gpu__time_duration.sum,sm__cycles_elapsed.max -- "$@"
  ncu -i "$OUT/$label.ncu-rep" --page source --csv --print-source sass > "$OUT/r/src-$label.csv" 2>&1
  python3 tools/ncu_summary.py source "$OUT/r/src-$label.csv"
}
eval "${STEPS:?give the steps as a file argument or in STEPS}"
rm -f "$OUT/m.log" "$OUT/t.log" "$OUT/o.log" "$OUT/a.log" "$OUT/p.log" "$OUT"/r/*.svg
touch "$OUT/summary.txt" "$OUT/suite.log"  # (a name the archive lists but that is missing fails it)
archive "$OUT" "call-$(date +%H%M%S)" "r/*.json" "r/*.csv" "build*.log" summary.txt suite.log "t-failed-*.log"
echo "== end at $(el) s"
