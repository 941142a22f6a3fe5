# What session 102 owes on one GPU (~9 minutes with the start): 01cf213 changed how device code
# reports errors (plain stores into the host record, the first error claimed on a word in device
# memory); compute-sanitizer's memcheck ran every suite on it but the fault and debug-check tests,
# and the Python suite did not run. Here, in Release (with -lineinfo, so that s102-csan2-x1.sh can
# follow on the warm machine without a rebuild): the fault tests at 2 and 4 ranks, the debug
# checks' tiers at 3 and 2 ranks, the Python suite at 2 ranks, and the 1-rank binary.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo bash tools/call.sh tools/steps/s103-owed-x1.sh
# (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=30000
t=$(L 60) && FILTER='Fault.*' TLIMIT=$t T 2 2
t=$(L 60) && FILTER='Fault.*' TLIMIT=$t T 4 4
t=$(L 60) && FILTER='DebugChecks.*:Fault.*:Random.*' TLIMIT=$t T 3 3 SYMMEM_DEBUG_CHECKS=1
PYBUILD
t=$(L 120) && PYN python_gpu_2ranks 2 "$t" test_gpu.py
t=$(L 150) && FILTER='DebugChecks.*:Collectives*:Rooted.*:Stream.*:Moe.*:Overlap.*' TLIMIT=$t T 2 2 SYMMEM_DEBUG_CHECKS=1
t=$(L 90) && FILTER='-Fault.*' TLIMIT=$t T 1 1
true
