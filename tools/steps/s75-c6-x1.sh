# Steps for tools/call.sh on a 1-GPU machine (session 75, call 6): how often
# Overlap.TransposedGemmDynamicScheduleOnOneGpu fails (call 5: once, in the debug-checks tier at 2
# ranks on the GPU: 1536 x 512 x 320, max_ctas 8, 3 shards, run 0, a C element never written).
# The test repeated at 1 rank, at 2 ranks on the GPU, and at 2 with SYMMEM_DEBUG_CHECKS=1.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s75-c6-x1.sh
rep() {  # rep LABEL RANKS REPEAT [VAR=value...]
  local label=$1 n=$2 r=$3; shift 3
  env "$@" timeout 150 build/symmem-run -n "$n" --ranks-per-gpu "$n" build/tests/symmem_gpu_tests \
    --gtest_filter='Overlap.TransposedGemmDynamicSchedule*' --gtest_repeat="$r" > "$OUT/rep-$label.log" 2>&1
  echo "== $label ($n ranks, $r repeats, $*) rc $? at $(el) s: $(grep -c '\[       OK \]' "$OUT/rep-$label.log") OK, $(grep -c '\[  FAILED  \] Overlap' "$OUT/rep-$label.log") FAILED lines"
  grep -E "got |left at" "$OUT/rep-$label.log" | sort | uniq -c | head -6
}
rep one 1 20
rep two 2 25
rep two-debug 2 25 SYMMEM_DEBUG_CHECKS=1
true
