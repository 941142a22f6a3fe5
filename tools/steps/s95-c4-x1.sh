# Session 95, call 4 (one GPU, ~560 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# random stream rounds on reversed teams of every other rank at 3 and 8 ranks (an odd world: teams
# of 2 and 1), then the GPU binary's whole tiers as ctest's gpu_1rank, multigpu_2ranks_1gpu and
# multigpu_4ranks_1gpu run them ("-Fault.*") on the session's final tests, then the debug-checks
# tier at 2 ranks, each bounded by what is left of the call.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s95-c4-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000
t=$(L 40) && FILTER='Stream.Random*' TLIMIT=$t T 3 3
grep -h "random stream" "$OUT/t.log" | sort | uniq -c
t=$(L 40) && FILTER='Stream.Random*' TLIMIT=$t T 8 8
grep -h "random stream" "$OUT/t.log" | sort | uniq -c
t=$(L 130) && FILTER='-Fault.*' TLIMIT=$t T 2 2
t=$(L 80) && FILTER='-Fault.*' TLIMIT=$t T 1 1
t=$(L 260) && FILTER='-Fault.*' TLIMIT=$t T 4 4
t=$(L 120) && FILTER='DebugChecks.*:Collectives.*:Rooted.*:Stream.*:Moe.*:Overlap.*' TLIMIT=$t T 2 2 SYMMEM_DEBUG_CHECKS=1
true
