# Session 100's owed call, for the next session (one GPU, ~550 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"):
# d600f99's overlap agreement (the call named first: DebugChecks.*'s new case of two different
# overlapped GEMMs) under SYMMEM_DEBUG_CHECKS=1 at 2 ranks, then the three ctest tiers of an odd
# world on one GPU that 779e053 added (multigpu_3ranks_1gpu, multigpu_debug_checks_3ranks_1gpu with
# DebugChecks.* at 3, python_gpu_3ranks_1gpu; never run through ctest; the Python suite there is the
# first run of 36f4435's key removal through torch's store, TCPStore.delete_key), then the rest of the 6-rank
# sweep session 100 began (at 6 it ran Collectives, Rooted, Random, DeviceApi, Stream and two Moe
# tests, all passed, before its time limit) and the Python suite at 6. The 7-rank sweep follows in
# tools/steps/s100-next2-x1.sh: send it as the next `run` at once, while the machine is warm.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s100-next-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
t=$(L 40) && SYMMEM_DEBUG_CHECKS=1 FILTER='DebugChecks.*' TLIMIT=$t T 2 2
t=$(L 220) && timeout "$t" ctest --test-dir build -V -R '^(multigpu_3ranks_1gpu|multigpu_debug_checks_3ranks_1gpu|python_gpu_3ranks_1gpu)$' > "$OUT/ctest3.log" 2>&1
echo "== ctest, the 3-rank tiers on one GPU: rc $? at $(el) s"
grep -aE "^ *[0-9]+/[0-9]+ Test|tests passed|\[  PASSED  \]|\[  FAILED  \]|[0-9]+ passed.* in [0-9.]+s" "$OUT/ctest3.log" | sed -E 's/^[0-9]+: //' | sort | uniq -c | head -30
t=$(L 100) && FILTER='Heap.*:ContextSetup.*:DeviceAtomics.*:Moe.*:Fault.*:Overlap.RandomShapesFormsAndCallOrders:Threads.*' TLIMIT=$t T 6 6
grep -h "random moe\|random overlap" "$OUT/t.log" | head -2
t=$(L 100) && PYN python_gpu_6ranks_1gpu 6 $t test_gpu.py
grep -a "^E  .*Error\|^E  .*assert" "$OUT/python_gpu_6ranks_1gpu.log" | sort | uniq -c | cut -c1-600 | head -12
true
