# Session 100, call 3 (one GPU, ~530 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# overlap tests at 5 ranks on one GPU that call 2 had no time for: the random overlap cases first,
# then those after Overlap.OwnGemmTransposedReduceScatterMatchesTheReference (5 ranks sharing one
# GPU make each own-GEMM test 2-4x its 3-rank time).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s100-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=30000
t=$(L 150) && TLIMIT=$t OT 5 5
t=$(L 250) && FILTER='Overlap.OwnGemmTransposedReduceScatterStraddles:Overlap.OwnGemmEpilogueRingMatchesTheReference:Overlap.ReduceScatterFormsOneAfterAnother:Overlap.OwnGemmRowShardsOnOneGpu:Overlap.TransposedGemmDynamicScheduleOnOneGpu:Overlap.EpilogueRingOfVirtualRanksOnOneGpu:Overlap.RowsNotAMultipleOfTheRanksAreRefusedOnEveryRank:Overlap.KnobsMisspeltOrUnlikeAcrossRanksAreRefused' TLIMIT=$t T 5 5
grep -a "\[       OK \]" "$OUT/t.log" | grep "rank 0" | sed 's/.*OK \] //'
true
