# Steps for tools/call.sh on a 2-GPU machine (session 63, call 2: kSumC at any shard count): the
# GPU suite's 1- and 2-GPU tiers (ctest gpu_1rank, multigpu_2ranks_2gpus, the fault tier with
# Fault.AgreedStepsStopEveryRankTogether, the own GEMM's forms at 2 ranks on 1 GPU and 4 on 2,
# python_gpu_2gpus, the tensor-parallel example), stopped after 330 s; then symmem-bench overlap at
# TP = 2, both models, M 8192 / 16384. ~8 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s63-c2-x2.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=330 tools/gpu_run.sh --no-bench \
  --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm|python_gpu_2gpus|python_example_tp_mlp_2gpus" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -12
grep -E "\[  PASSED  \]|\[  FAILED  \]|[0-9]+ passed|[0-9]+ failed" $OUT/suite.log | sort | uniq -c | head -30
grep -B2 -A12 "FAILED  \] Fault.Agreed" $OUT/suite.log | head -30
O final SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
true
# (Call 1's loopback again: the fused forms at TP = 4's shapes over 4 shards, kSumC against the ring.)
for s in "8192 4096 3584 4" "16384 4096 3584 8" "8192 8192 7168 4" "16384 8192 7168 8"; do
  set -- $s
  HGEMM_RS=1 HGEMM_GROUPS=$4 HGEMM_SUSTAIN=10 H $1 $2 $3 2 2 15 0 4 --json $OUT/r/rs-loop.json
done
true
