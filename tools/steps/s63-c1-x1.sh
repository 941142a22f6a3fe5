# Steps for tools/call.sh on a 1-GPU machine (session 63, call 1): the fused form's partials through
# the summing consumer's C slots at any shard count (kSumC, until now 2 shards only). The GPU tier
# on one GPU (gpu_1rank: Overlap.OwnGemmRowShardsOnOneGpu runs hopper_gemm_t's fused sum at 2, 3,
# 4 and 8 shards both ways, signals preset) and the own GEMM's forms at 2 ranks on it, stopped
# after 240 s; the transposed fused form at 4 ranks on the one GPU (4 a GPU: a timeout there may be
# starvation); then the fused forms looped back (HGEMM_RS=1: partials landed beforehand) at TP = 4's
# shapes over 4 shards, kSumC against the partials in the ring, and TP = 2's 8B M 16384 as control.
# ~8 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s63-c1-x1.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=240 tools/gpu_run.sh --no-bench \
  --ctest-args "-R gpu_1rank|multigpu_own_gemm_2ranks_1gpu" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -6
grep -E "\[  PASSED  \]|\[  FAILED  \]|[0-9]+ passed|[0-9]+ failed" $OUT/suite.log | sort | uniq -c | head -20
grep -E "^\[  FAILED  \]|Failure|OwnGemmRowShardsOnOneGpu" $OUT/suite.log | head -10
FILTER='Overlap.OwnGemmTransposedReduceScatterMatchesTheReference' TLIMIT=120 T 4 4 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
. tools/steps/s63-rs-loop-tp4.sh
HGEMM_RS=1 HGEMM_GROUPS=16 HGEMM_SUSTAIN=10 H 16384 4096 7168 2 2 15 0 2 --json $OUT/r/rs-loop.json
true
