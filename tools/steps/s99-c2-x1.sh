# Session 99, call 2 (one GPU, ~520 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): a sweep
# of the debug checks (SYMMEM_DEBUG_CHECKS=1) at 3 ranks on one GPU, where the parity teams are
# uneven: the Python suite, every random C++ test (the interleaving, MoE, overlap, device-API
# traffic, stream rounds), then the rest of the GPU binary; then the Python suite at 2 ranks
# without them (this session's first call ran it at 4).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s99-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
export SYMMEM_DEBUG_CHECKS=1
t=$(L 130) && PYN python_gpu_3ranks_dbg 3 $t test_gpu.py
grep -aoh "random [^:]*: [0-9]* [a-z]* ran and checked [^;]*\|[A-Za-z]*Error: .*\|assert .*" "$OUT/python_gpu_3ranks_dbg.log" | cut -c1-600 | head -12
for random_test in RT MT OT DT ST; do t=$(L 60) && TLIMIT=$t $random_test 3 3; done
t=$(L 120) && FILTER='*-Random.*:Moe.RandomShapesRoutingAndCallForms:Overlap.RandomShapesFormsAndCallOrders:DeviceApi.RandomTraffic*:Stream.RandomPutsGetsAndSignalsBetweenEveryPair' TLIMIT=$t T 3 3
unset SYMMEM_DEBUG_CHECKS
t=$(L 80) && PYN python_gpu_2ranks_1gpu 2 $t test_gpu.py
true
