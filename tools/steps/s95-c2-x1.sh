# Session 95, call 2 (one GPU, ~540 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# random overlap cases, now half of them asking for the own GEMM's forms where they can run (2
# ranks on the GPU with SYMMEM_OVERLAP_OWN_SHARED=1), at 2 ranks, also under SYMMEM_DEBUG_CHECKS=1
# (the ctest entry multigpu_debug_checks_2ranks_1gpu runs Overlap.*), then at 4, 8, 3 and 1; then
# the rest of the overlap suite at 2 ranks (call 1 gave it 60 s, too few for its own-GEMM tests'
# references), each bounded by what is left of the call.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s95-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000 SYMMEM_TEST_CASES=1
t=$(L 200) && TLIMIT=$t OT 2 2
t=$(L 40) && TLIMIT=$t OT 4 4
t=$(L 40) && TLIMIT=$t OT 8 8
t=$(L 120) && TLIMIT=$t OT 2 2 SYMMEM_DEBUG_CHECKS=1
t=$(L 30) && TLIMIT=$t OT 3 3
t=$(L 30) && TLIMIT=$t OT 1 1
t=$(L 200) && FILTER='Overlap.*-Overlap.Random*:Overlap.Own*' TLIMIT=$t T 2 2
true
