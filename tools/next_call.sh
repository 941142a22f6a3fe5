#!/usr/bin/env bash
# One device call that builds a tree, sweeps `symmem-bench moe` over environment settings, prints
# the phase stamps, and runs the GPU tests (carry [".deps"]; COMMIT=<sha> labels the run).
#   TREE   the tree to build (default: the work tree; a branch exported by `tools/ab.sh prepare
#          REF` is .deps/ab/REF)
#   SHAPES symmem-bench moe's shapes (default: prefill)
#   SWEEP  space-separated items, each a comma-separated list of VAR=value set for one bench run
#          ("-" for none), e.g. SWEEP="SYMMEM_MOE_RING=0 - SYMMEM_MOE_RING_FENCE=chunk,SYMMEM_MOE_RING_SENDERS=8"
#   TRACE  the same form: one more run with SYMMEM_MOE_TRACE=1 and these settings ("" for none)
#   TESTS  a gtest filter (default Moe*) run by symmem-run at every rank count from the GPUs present
#          down to 2, one rank a GPU ("-" for none); for the work tree, CTEST=<ctest -R regex> runs ctest instead
#   STOP_S ctest's stop time in seconds (default 260)
# Session 11: a sweep item costs ~10-15 s at 4 GPUs (prefill only); the build ~40 s on a fresh machine.
. "$(dirname "$0")/lib.sh"  # (multicast off in every child)
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
TREE=${TREE:-.}
B=$TREE/build; [ "$TREE" != . ] && B=$TREE/build-ab
cmake -S "$TREE" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_GTEST_SOURCE="$PWD/.deps/googletest" -DSYMMEM_BUILD_PYTHON=OFF \
  > "$OUT/build.log" 2>&1 && cmake --build "$B" -j "$(nproc)" --target symmem-bench symmem_gpu_tests symmem-run >> "$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/build.log"
echo "== built $TREE at $(el) s"
nvidia-smi -L
bench() {  # bench ITEM [extra VAR=value ...]
  local item=$1; shift
  local envs=()
  [ "$item" != - ] && IFS=, read -ra envs <<< "$item"
  env "${envs[@]}" "$@" SYMMEM_MOE_SHAPES="${SHAPES:-prefill}" timeout 60 "$B/bench/symmem-bench" moe > "$OUT/m.log" 2>&1
}
for item in ${SWEEP:--}; do
  bench "$item"
  echo "== $item:"; grep -E '^ +[a-z]' "$OUT/m.log" | grep -v shape || tail -5 "$OUT/m.log"
done
if [ -n "${TRACE:-}" ]; then
  bench "$TRACE" SYMMEM_MOE_TRACE=1
  echo "== trace, $TRACE:"; grep -E "^# trace" "$OUT/m.log" || tail -5 "$OUT/m.log"
fi
rm -f "$OUT/m.log"
echo "== sweep done at $(el) s"
if [ -n "${CTEST:-}" ] && [ "$TREE" = . ]; then
  COMMIT=${COMMIT:-x} SYMMEM_CTEST_STOP_S=${STOP_S:-260} tools/gpu_run.sh --no-bench --ctest-args "-R $CTEST --timeout 150" 2>&1 | grep -v "^== built"
elif [ "${TESTS:-}" != - ]; then
  ngpu=$(nvidia-smi -L | wc -l)
  for ((n = ngpu; n >= 2; n--)); do
    timeout 150 "$B/symmem-run" -n "$n" "$B/tests/symmem_gpu_tests" --gtest_filter="${TESTS:-Moe*}" > "$OUT/t.log" 2>&1
    echo "== tests at $n ranks on $n GPUs (rc $?):"; grep -E "\[  PASSED  \]|\[  FAILED  \]" "$OUT/t.log" | sort | uniq -c
    grep -E "Failure|rank [0-9]+:.*(error|timed out)" "$OUT/t.log" | head -10
  done
  rm -f "$OUT/t.log"
fi
echo "== end at $(el) s"
