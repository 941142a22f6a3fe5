# Follows tools/steps/s100-next-x1.sh on the still-warm machine (its build there: ~5 s, the run's
# wall time alone): a world of 7 ranks on one GPU, never run: the GPU binary but the overlap and
# fault tests, then the fault tests and DebugChecks.* under the checks; then a run with a misspelt
# setting set on purpose (session 100's line naming it, once, on rank 0). symmem-bench needs a GPU
# a rank (NCCL): its session-100 changes (checked writes, the derived kind) run in the next 2-GPU
# call's main job.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s100-next2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=30000
t=$(L 240) && FILTER='*-Overlap.*:Fault.*' TLIMIT=$t T 7 7
grep -h "random interleaving\|random moe\|random device traffic\|random stream" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | cut -c1-300 | head -12
t=$(L 40) && FILTER='Fault.*' TLIMIT=$t T 7 7
t=$(L 60) && SYMMEM_DEBUG_CHECKS=1 FILTER='DebugChecks.*:Random.*' TLIMIT=$t T 7 7
t=$(L 150) && FILTER='Overlap.RandomShapesFormsAndCallOrders:Overlap.GemmsWithCommunicationMatchTheReference:Overlap.WideOutputsGroupThePeersShards:Overlap.OddRowsPerRankSplitIntoUnequalParts:Overlap.RowsNotAMultipleOfTheRanksAreRefusedOnEveryRank' TLIMIT=$t T 7 7
t=$(L 30) && SYMMEM_DEBUG_CHECK=1 FILTER='Heap.EveryRankMapsEveryPeer' TLIMIT=$t T 2 2
grep -a "no symmem setting" "$OUT/t.log" | head -3
true
