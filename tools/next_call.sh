#!/usr/bin/env bash
# One device call that builds a tree, sweeps `symmem-bench moe` over environment settings, prints
# the phase stamps, and runs the GPU tests (carry [".deps"]; COMMIT=<sha> labels the run).
#   TREE   the trees to build, space-separated (default: the work tree "."; a branch exported by
#          `tools/ab.sh prepare REF` is .deps/ab/REF); every sweep item runs on each tree in turn
#   SHAPES symmem-bench moe's shapes (default: prefill)
#   SWEEP  space-separated items, each a comma-separated list of VAR=value set for one bench run
#          ("-" for none), e.g. SWEEP="SYMMEM_MOE_RING=0 - SYMMEM_MOE_RING_FENCE=chunk,SYMMEM_MOE_RING_SENDERS=8"
#   TRACE  the same form: one more run with SYMMEM_MOE_TRACE=1 and these settings ("" for none)
#   TESTS  a gtest filter (default Moe*) run by symmem-run at every rank count from the GPUs present
#          down to 2, one rank a GPU ("-" for none), on every tree; RPG="1 2" adds a run at two ranks a GPU;
#          for the work tree, CTEST=<ctest -R regex> runs ctest instead
#   SWEEP=none runs no benchmark
#   STOP_S ctest's stop time in seconds (default 260)
# Session 11: a sweep item costs ~10-15 s at 4 GPUs (prefill only); the build ~40 s on a fresh machine.
. "$(dirname "$0")/lib.sh"  # (multicast off in every child)
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
TREES=(${TREE:-.})
bdir() { if [ "$1" = . ]; then echo build; else echo "$1/build-ab"; fi; }
for t in "${TREES[@]}"; do
  B=$(bdir "$t")
  cmake -S "$t" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_GTEST_SOURCE="$PWD/.deps/googletest" -DSYMMEM_BUILD_PYTHON=OFF \
    > "$OUT/build.log" 2>&1 && cmake --build "$B" -j "$(nproc)" --target symmem-bench symmem_gpu_tests symmem-run >> "$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
  echo "== built $t at $(el) s"
done
rm -f "$OUT/build.log"
nvidia-smi -L
bench() {  # bench TREE ITEM [extra VAR=value ...]
  local B; B=$(bdir "$1"); shift
  local item=$1; shift
  local envs=()
  [ "$item" != - ] && IFS=, read -ra envs <<< "$item"
  env "${envs[@]}" "$@" SYMMEM_MOE_SHAPES="${SHAPES:-prefill}" timeout 60 "$B/bench/symmem-bench" moe > "$OUT/m.log" 2>&1
}
[ "${SWEEP:-}" = none ] && SWEEP=""
for item in ${SWEEP-"-"}; do
  for t in "${TREES[@]}"; do
    bench "$t" "$item"
    echo "== $t, $item:"; grep -E '^ +[a-z]' "$OUT/m.log" | grep -v shape || tail -5 "$OUT/m.log"
  done
done
if [ -n "${TRACE:-}" ]; then
  bench "${TREES[0]}" "$TRACE" SYMMEM_MOE_TRACE=1
  echo "== trace, $TRACE:"; grep -E "^# trace" "$OUT/m.log" || tail -5 "$OUT/m.log"
fi
rm -f "$OUT/m.log"
echo "== sweep done at $(el) s"
if [ -n "${CTEST:-}" ] && [ "${TREES[0]}" = . ]; then
  COMMIT=${COMMIT:-x} SYMMEM_CTEST_STOP_S=${STOP_S:-260} tools/gpu_run.sh --no-bench --ctest-args "-R $CTEST --timeout 150" 2>&1 | grep -v "^== built"
elif [ "${TESTS:-}" != - ]; then
  ngpu=$(nvidia-smi -L | wc -l)
  runs=()  # "ranks ranks-per-GPU"
  for rpg in ${RPG:-1}; do
    if [ "$rpg" = 1 ]; then for ((n = ngpu; n >= 2; n--)); do runs+=("$n 1"); done; else runs+=("$((ngpu * rpg)) $rpg"); fi
  done
  for t in "${TREES[@]}"; do B=$(bdir "$t"); for r in "${runs[@]}"; do
    set -- $r
    timeout 150 "$B/symmem-run" -n "$1" --ranks-per-gpu "$2" "$B/tests/symmem_gpu_tests" --gtest_filter="${TESTS:-Moe*}" > "$OUT/t.log" 2>&1
    echo "== $t: tests at $1 ranks, $2 a GPU (rc $?):"; grep -E "\[  PASSED  \]|\[  FAILED  \]" "$OUT/t.log" | sort | uniq -c
    grep -E "Failure|rank [0-9]+:.*(error|timed out)" "$OUT/t.log" | head -10
  done; done
  rm -f "$OUT/t.log"
fi
echo "== end at $(el) s"
