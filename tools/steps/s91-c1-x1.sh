# Session 91 (one GPU, ~350 s; run with EXTRA_TARGETS="all_reduce ring moe"): the fault tests at 3,
# 4 and 8 ranks on one GPU (ctest runs them at 2 ranks only: the agreed steps' stop and the unmet
# waits' reports at an odd team and at 8 ranks; the tests that need exactly 2 ranks skip), then the
# C++ examples at 4 and 8 ranks on the GPU (ctest runs them at 2).
#   COMMIT=<sha> EXTRA_TARGETS="all_reduce ring moe" bash tools/call.sh tools/steps/s91-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
FILTER='Fault.*' TLIMIT=90 T 3 3
FILTER='Fault.*' TLIMIT=90 T 4 4
FILTER='Fault.*' TLIMIT=150 T 8 8 SYMMEM_TIMEOUT_MS=100000
for n in 4 8; do
  for ex in all_reduce ring moe; do
    SYMMEM_TIMEOUT_MS=100000 timeout 120 build/symmem-run -n $n --ranks-per-gpu $n build/examples/$ex > "$OUT/ex.log" 2>&1
    rc=$?
    echo "== example $ex at $n ranks on the GPU rc $rc at $(el) s:" | tee -a "$OUT/summary.txt"
    tail -4 "$OUT/ex.log" | tee -a "$OUT/summary.txt"
    [ $rc -eq 0 ] || cp "$OUT/ex.log" "$OUT/ex-$ex-$n-failed.log"
  done
done
true
