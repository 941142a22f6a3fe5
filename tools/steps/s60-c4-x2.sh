# Steps for tools/call.sh on a 2-GPU machine (session 60, call 4: the session's final code): the
# GPU suite's 1- and 2-GPU tiers (ctest gpu_1rank, multigpu_2ranks_2gpus, the own GEMM's forms at 2
# ranks on 1 GPU and 4 on 2, python_gpu_2gpus, the tensor-parallel example), stopped after 300 s;
# then symmem-bench overlap at M 2048 / 4096 (where the sequential form may be chosen: its calls
# now end with a kernel more). ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s60-c4-x2.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=300 tools/gpu_run.sh --no-bench \
  --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus|multigpu_own_gemm|python_gpu_2gpus|python_example_tp_mlp_2gpus" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -12
grep -E "\[  PASSED  \]|\[  FAILED  \]|[0-9]+ passed|[0-9]+ failed" $OUT/suite.log | sort | uniq -c | head -30
O small SYMMEM_OVERLAP_M=2048,4096 | grep -E "^==|ag\\+mm|mm\\+rs"
true
