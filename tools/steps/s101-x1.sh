# Session 101's call (one GPU, ~450 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"):
# session 101's first call put Fault.* (whose last test kills a rank) in one run with suites that
# gtest runs after it, so those failed at once ("rank 5 exited"), in the 6-rank step and in the
# new ctest tier multigpu_debug_checks_3ranks_1gpu. Now the killing test skips where the filter
# selects a test after it. Here: that tier through ctest (the killing test skips; the rest pass),
# the 6-rank tests the kill hid (Moe.*, the random overlap, Threads.*), Fault.* at 6 alone, and the
# Python suite at 8 ranks under the debug checks (an exchange through torch's store every call)
# with the new test that torch's store keeps no used keys, then at 3 without the checks.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s101-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
t=$(L 90) && timeout "$t" ctest --test-dir build -V -R '^multigpu_debug_checks_3ranks_1gpu$' > "$OUT/ctest3.log" 2>&1
echo "== ctest multigpu_debug_checks_3ranks_1gpu: rc $? at $(el) s"
grep -aE "^ *[0-9]+/[0-9]+ Test|tests passed|\[  PASSED  \]|\[  FAILED  \]|\[  SKIPPED \] [0-9]|kills a rank" "$OUT/ctest3.log" | sed -E 's/^[0-9]+: //; s/^\[rank [0-9]+\] //' | sort | uniq -c | cut -c1-300 | head -20
t=$(L 150) && FILTER='Moe.*:Overlap.RandomShapesFormsAndCallOrders:Threads.*' TLIMIT=$t T 6 6
grep -h "random moe\|random overlap" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | head -3
t=$(L 40) && FILTER='Fault.*' TLIMIT=$t T 6 6
t=$(L 150) && SYMMEM_DEBUG_CHECKS=1 PYN python_gpu_8ranks_checks 8 $t test_gpu.py
grep -a "^E  .*Error\|^E  .*assert\|left .* more keys" "$OUT/python_gpu_8ranks_checks.log" | sort | uniq -c | cut -c1-600 | head -12
t=$(L 80) && PYTEST_ADDOPTS="-k 'store or skips'" PYN python_store_3ranks 3 $t test_gpu.py
true
