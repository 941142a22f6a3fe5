#!/usr/bin/env bash
# One GPU-machine session: build, every ctest tier, then the benchmark beside NCCL (and PyTorch's
# anchor when .deps/anchors is there). Logs and JSON go to $OUT (default ./gpu-out).
#   tools/gpu_run.sh [--no-tests] [--no-bench] [--kind KIND] [--bench-args "..."] [--ctest-args "..."]
# Environment: SYMMEM_BENCH_{ALL,MOE,OVERLAP,PYTHON}=0 skip a suite; SYMMEM_BENCH_OP (default all)
# is what the first suite runs; SYMMEM_PYBENCH_ARGS go to python -m symmem.bench;
# SYMMEM_SUITE_TIMEOUT (s) bounds each suite.
# (The Python package is built where pybind11 is found; its benchmark runs after symmem-bench.)
# Multicast stays off in every child: NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
# NVSHMEM_DISABLE_NVLS=1.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
tests=1 bench=1 kind=unknown bench_args="" ctest_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-tests) tests=0 ;;
    --no-bench) bench=0 ;;
    --kind) kind=$2; shift ;;
    --bench-args) bench_args=$2; shift ;;
    --ctest-args) ctest_args=$2; shift ;;
    *) echo "gpu_run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
# The lent machines' default compiler (/opt/gcc) links libstdc++ statically into every shared
# object; the Python extension must share the interpreter's libstdc++, so build with the system's.
if [ -x /usr/bin/g++ ] && [ "${SYMMEM_KEEP_CXX:-0}" != 1 ]; then export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++; fi
commit=${COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
[ -z "${COMMIT:-}" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit+dirty"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
# The kind in the results is the one the GPUs present say (a call that asks for one kind may run on
# another): nvidia-<card>-x<count>, from nvidia-smi; a --kind that disagrees is reported and replaced.
seen=$(gpu_kind)
if [ -n "$seen" ]; then
  [ "$kind" != unknown ] && [ "$kind" != "$seen" ] && echo "gpu_run.sh: --kind $kind, but the GPUs here make it $seen: labelling results $seen"
  kind=$seen
fi
echo "== $(date -u +%FT%TZ) commit $commit, $ngpu GPUs, kind $kind"
nvidia-smi -L
gtest=""
[ -d .deps/googletest ] && gtest="-DSYMMEM_GTEST_SOURCE=$PWD/.deps/googletest"
# (AUTO again: a build directory that tools/next_call.sh configured without the package gets it back)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_BUILD_PYTHON=AUTO $gtest > "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== built"
rc=0
if [ "$tests" = 1 ]; then
  # Verbose: every test's own output is kept (a closing note quotes the suites' summary lines).
  # SYMMEM_CTEST_STOP_S=N: ctest stops its tests N seconds from now and still prints its summary
  # (an outer `timeout` would kill it with the summary unwritten).
  stop=()
  [ -n "${SYMMEM_CTEST_STOP_S:-}" ] && stop=(--stop-time "$(date -d "+${SYMMEM_CTEST_STOP_S} seconds" +%H:%M:%S)")
  ctest --test-dir build -V "${stop[@]}" $ctest_args > "$OUT/ctest.log" 2>&1
  rc=$?
  grep -E "^ *[0-9]+/[0-9]+ Test|tests passed|Total Test" "$OUT/ctest.log"
  # The suites' own summaries: gtest's per rank, pytest's (or tests/python/runner.py's) per rank.
  grep -E "\[  PASSED  \]|\[  FAILED  \]|=====.*(passed|failed)|[0-9]+ passed.* in [0-9.]+s" "$OUT/ctest.log" |
    sed -E 's/^[0-9]+: //' | sort | uniq -c | head -40
  [ $rc -ne 0 ] && grep -E "FAILED|failed on some ranks|rank [0-9]+:|Timeout|error" "$OUT/ctest.log" | head -40
fi
if [ "$bench" = 1 ] && [ "$ngpu" -ge 2 ]; then
  prefix="$OUT/$(date -u +%F)-${kind}"
  # Each suite is bounded (SYMMEM_SUITE_TIMEOUT s) so that what ran still comes back.
  T=${SYMMEM_SUITE_TIMEOUT:-240}
  if [ "${SYMMEM_BENCH_ALL:-1}" = 1 ]; then
  timeout "$T" ./build/bench/symmem-bench "${SYMMEM_BENCH_OP:-all}" --kind "$kind" --commit "$commit" --json "$prefix-all.json" \
    --table "$prefix-table.txt" $bench_args > "$OUT/bench.log" 2>&1 || rc=1
  grep -E "^#|all_reduce|wrong" "$OUT/bench.log" | head -5
  fi
  # A PyTorch anchor (../shared/anchors, copied into .deps) beside a suite, when it is there.
  anchor() {  # anchor NAME LOG
    [ -f ".deps/anchors/$1.py" ] || return 0
    timeout "$T" torchrun --nproc-per-node="$ngpu" ".deps/anchors/$1.py" --out "$prefix-$1.json" > "$OUT/$2" 2>&1 ||
      echo "anchor $1 failed (see $2)"
    # The anchor's JSON says neither the machine kind nor the commit it ran beside: stamp them in.
    [ -f "$prefix-$1.json" ] && KIND="$kind" COMMIT_ID="$commit" python3 - "$prefix-$1.json" <<'PY'
import datetime, json, os, sys
d = json.load(open(sys.argv[1]))
d.setdefault("device_kind", os.environ["KIND"]); d.setdefault("commit", os.environ["COMMIT_ID"])
d.setdefault("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
  }
  # A symmem-bench suite and its anchor, unless SYMMEM_BENCH_<SUITE>=0.
  suite() {  # suite NAME ANCHOR
    local flag="SYMMEM_BENCH_${1^^}"
    [ "${!flag:-1}" = 1 ] || return 0
    timeout "$T" ./build/bench/symmem-bench "$1" --kind "$kind" --commit "$commit" --json "$prefix-$1.json" > "$OUT/$1.log" 2>&1 || rc=1
    grep -E "^#|^ " "$OUT/$1.log" | head -20
    anchor "$2" "torch_$1.log"
  }
  [ "${SYMMEM_BENCH_ALL:-1}" = 1 ] && [ "${SYMMEM_BENCH_OP:-all}" = all ] && anchor torch_allreduce torch.log
  suite moe torch_moe_a2a        # MoE dispatch/combine beside NCCL and PyTorch's baseline (issue 10)
  suite overlap torch_overlap    # GEMM overlap beside the GEMM alone, cuBLASLt + NCCL, PyTorch's fused ops (issue 11)
  # symmem from Python beside PyTorch's symmetric memory and NCCL, in the same run, and vLLM's
  # custom all-reduce where its header is in .deps/vllm (tools/peers.sh says how it gets there).
  if [ -d build/python/symmem ] && [ "${SYMMEM_BENCH_PYTHON:-1}" = 1 ]; then
    vllm=()
    [ -f .deps/vllm/csrc/custom_all_reduce.cuh ] && vllm=(--vllm-peer bench/peers/vllm_custom_ar.py)
    PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$commit TORCH_EXTENSIONS_DIR=$PWD/.deps/torch-ext timeout "$T" torchrun --nproc-per-node="$ngpu" -m symmem.bench --kind "$kind" "${vllm[@]}" ${SYMMEM_PYBENCH_ARGS:-} \
      --out "$prefix-python.json" > "$OUT/pybench.log" 2>&1 || { echo "python bench failed (see pybench.log)"; rc=1; }
    grep -E "^#|^ " "$OUT/pybench.log" | head -20
  fi
fi
# Few files come back from a device run: the logs in one, the results in one archive.
for f in torch.log moe.log torch_moe.log overlap.log torch_overlap.log pybench.log; do
  [ -f "$OUT/$f" ] && { echo "===== $f"; cat "$OUT/$f"; } >> "$OUT/bench.log" && rm -f "$OUT/$f"
done
# Only after benchmarks of its own (a tests-only run leaves what an earlier step of the same call
# wrote alone: session 9 lost JSON that way), and never over an earlier archive.
[ "$bench" = 1 ] && archive "$OUT" results "*.json" "*.svg" "*.txt"
exit $rc
