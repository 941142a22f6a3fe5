# Follows tools/steps/s100-next-x1.sh on the still-warm machine (its build there: ~5 s, the run's
# wall time alone): a world of 7 ranks on one GPU, never run: the GPU binary but the overlap and
# fault tests, then the fault tests and DebugChecks.* under the checks; then symmem-bench at 2 ranks
# on the GPU (session 100's checked JSON and plot writes, the kind it derives; the misspelt-setting
# line, set on purpose).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run symmem-bench" bash tools/call.sh tools/steps/s100-next2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=30000
t=$(L 240) && FILTER='*-Overlap.*:Fault.*' TLIMIT=$t T 7 7
grep -h "random interleaving\|random moe\|random device traffic\|random stream" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | cut -c1-300 | head -12
t=$(L 40) && FILTER='Fault.*' TLIMIT=$t T 7 7
t=$(L 60) && SYMMEM_DEBUG_CHECKS=1 FILTER='DebugChecks.*:Random.*' TLIMIT=$t T 7 7
t=$(L 150) && FILTER='Overlap.RandomShapesFormsAndCallOrders:Overlap.GemmsWithCommunicationMatchTheReference:Overlap.WideOutputsGroupThePeersShards:Overlap.OddRowsPerRankSplitIntoUnequalParts:Overlap.RowsNotAMultipleOfTheRanksAreRefusedOnEveryRank' TLIMIT=$t T 7 7
t=$(L 60) && SYMMEM_DEBUG_CHECK=1 timeout "$t" build/symmem-run -n 2 --ranks-per-gpu 2 build/bench/symmem-bench all_reduce -e 64K \
  --json "$OUT/bench-2r.json" > "$OUT/bench-2r.log" 2>&1
echo "== symmem-bench all_reduce at 2 ranks on one GPU: rc $? at $(el) s"
grep -aE "no symmem setting|wrote|^ +[0-9]+ " "$OUT/bench-2r.log" | head -12; grep -o "\"device_kind\": \"[^\"]*\"" "$OUT/bench-2r.json"
true
