# Session 95 (one GPU, ~520 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the random
# overlap cases (Overlap.RandomShapesFormsAndCallOrders: shapes, forms, knobs alike and rank-local,
# call orders, graphs, calls between) at 1, 2, 4 and 8 ranks on the GPU, the random MoE test (its
# lines count now from run_moe) at 2 ranks, the random overlap cases at 3, the overlap suite at 2
# ranks (its helpers moved to overlap_check.hpp), the own-GEMM tier at 2 ranks, the random MoE test
# at 8, each bounded by what is left of the call.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s95-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000 SYMMEM_TEST_CASES=1
t=$(L 60) && TLIMIT=$t OT 1 1
t=$(L 90) && TLIMIT=$t OT 2 2
t=$(L 70) && TLIMIT=$t OT 4 4
t=$(L 90) && TLIMIT=$t OT 8 8
t=$(L 50) && TLIMIT=$t MT 2 2
t=$(L 60) && TLIMIT=$t OT 3 3
t=$(L 60) && FILTER='Overlap.*-Overlap.Random*' TLIMIT=$t T 2 2
t=$(L 70) && FILTER='Overlap.Own*' TLIMIT=$t T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1
t=$(L 80) && TLIMIT=$t MT 8 8
true
