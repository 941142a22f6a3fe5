# Session 100's owed call, for the next session (one GPU, ~520 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"):
# d600f99's overlap agreement (the call named first) under SYMMEM_DEBUG_CHECKS=1 at 2 and 3 ranks
# (DebugChecks.*: its new case of two different overlapped GEMMs), then the sweep of worlds of 6
# and 7 ranks on one GPU that session 100 began (at 6 it ran Collectives, Rooted, Random,
# DeviceApi, Stream and two Moe tests, all passed, before its time limit): at 6 the rest but the
# own-GEMM overlap tests (Heap, ContextSetup, DeviceAtomics, Moe, Fault, the random overlap,
# DebugChecks under the checks) and the Python suite; at 7 the GPU binary but the overlap tests.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s100-next-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
t=$(L 40) && SYMMEM_DEBUG_CHECKS=1 FILTER='DebugChecks.*' TLIMIT=$t T 2 2
t=$(L 40) && SYMMEM_DEBUG_CHECKS=1 FILTER='DebugChecks.*' TLIMIT=$t T 3 3
t=$(L 100) && FILTER='Heap.*:ContextSetup.*:DeviceAtomics.*:Moe.*:Fault.*:Overlap.RandomShapesFormsAndCallOrders:Threads.*' TLIMIT=$t T 6 6
grep -h "random moe\|random overlap" "$OUT/t.log" | head -2
t=$(L 40) && SYMMEM_DEBUG_CHECKS=1 FILTER='DebugChecks.*' TLIMIT=$t T 6 6
t=$(L 100) && PYN python_gpu_6ranks_1gpu 6 $t test_gpu.py
grep -a "^E  .*Error\|^E  .*assert" "$OUT/python_gpu_6ranks_1gpu.log" | sort | uniq -c | cut -c1-600 | head -12
t=$(L 200) && FILTER='*-Overlap.*' TLIMIT=$t T 7 7
grep -h "random interleaving\|random moe\|random device traffic\|random stream" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | cut -c1-300 | head -12
true
