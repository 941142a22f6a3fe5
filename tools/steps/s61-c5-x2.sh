# Steps for tools/call.sh on a 2-GPU machine (session 61, call 5): the Python GPU tiers after the
# tests' agreed_step (python_gpu_2gpus, python_gpu_2ranks_1gpu). ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s61-c5-x2.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=200 tools/gpu_run.sh --no-bench --ctest-args "-R python_gpu_2gpus|python_gpu_2ranks_1gpu" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -6
grep -E "[0-9]+ passed|[0-9]+ failed" $OUT/suite.log | sort | uniq -c | head
true
