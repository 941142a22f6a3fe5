# Session 100, call 2 (one GPU, ~565 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# end of session 99's debug-checks sweep at 3 ranks (call 1 ran out of time in it: the tests after
# Overlap.ReduceScatterFormsOneAfterAnother), then a world of 5 ranks on one GPU, which no test
# but Random.* had run at: the Python suite, the GPU binary but the overlap and fault tests, then
# the overlap tests (a team of 5: rows, tiles and rings that do not divide evenly).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s100-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
t=$(L 90) && SYMMEM_DEBUG_CHECKS=1 FILTER='Overlap.OwnGemmRowShardsOnOneGpu:Overlap.TransposedGemmDynamicScheduleOnOneGpu:Overlap.EpilogueRingOfVirtualRanksOnOneGpu:Overlap.RowsNotAMultipleOfTheRanksAreRefusedOnEveryRank:Overlap.KnobsMisspeltOrUnlikeAcrossRanksAreRefused:DebugChecks.*:Threads.*' TLIMIT=$t T 3 3
t=$(L 110) && PYN python_gpu_5ranks_1gpu 5 $t test_gpu.py
grep -a "^E  .*Error\|^E  .*assert" "$OUT/python_gpu_5ranks_1gpu.log" | sort | uniq -c | cut -c1-600 | head -12
t=$(L 170) && FILTER='*-Overlap.*:Fault.*' TLIMIT=$t T 5 5
grep -h "random interleaving\|random moe\|random device traffic\|random stream" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | cut -c1-300 | head -8
t=$(L 200) && FILTER='Overlap.*' TLIMIT=$t T 5 5
grep -h "random overlap" "$OUT/t.log" | head -2
true
