# Session 99's fixes, first run (one GPU, ~560 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"):
# at 3 ranks on one GPU (a world that is not a power of 2, uneven parity teams): the Python suite
# (the float64 avg reference, a true quotient now), then under SYMMEM_DEBUG_CHECKS=1 the fault
# tests (a skipped call named by the agreement; the context's abort mark cleared), the Python
# suite (its skipped-call test names the skipper's barrier) and the rest of the GPU binary; then
# the fault tests without the checks (the changed test's plain path).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s99-c4-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
t=$(L 100) && PYN python_gpu_3ranks_1gpu 3 $t test_gpu.py
export SYMMEM_DEBUG_CHECKS=1
t=$(L 60) && FILTER='Fault.*' TLIMIT=$t T 3 3
t=$(L 150) && PYN python_gpu_3ranks_dbg 3 $t test_gpu.py
grep -a "^E  .*Error\|^E  .*assert" "$OUT/python_gpu_3ranks_dbg.log" | sort | uniq -c | cut -c1-600 | head -12
unset SYMMEM_DEBUG_CHECKS
t=$(L 40) && FILTER='Fault.*' TLIMIT=$t T 3 3
export SYMMEM_DEBUG_CHECKS=1
t=$(L 150) && FILTER='*-Fault.*:Random.*:Moe.RandomShapesRoutingAndCallForms:Overlap.RandomShapesFormsAndCallOrders:DeviceApi.RandomTraffic*:Stream.RandomPutsGetsAndSignalsBetweenEveryPair' TLIMIT=$t T 3 3
true
