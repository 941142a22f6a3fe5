# Steps for tools/call.sh on a 4-GPU machine: the GPU suite only (ctest multigpu|gpu_1rank|python_gpu_4,
# stopped after 330 s), without suite-4gpu.sh's benchmarks: ~6.5 min with the machine's start.
# Run: COMMIT=<sha> bash tools/call.sh tools/steps/ctest-4gpu.sh (timeout 480; carry [".deps"]).
COMMIT=$C SYMMEM_CTEST_STOP_S=330 tools/gpu_run.sh --no-bench --ctest-args "-R multigpu|gpu_1rank|python_gpu_4" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -30
grep -E "^ +[0-9]+ .*(PASSED|FAILED|passed|failed)" $OUT/suite.log | head -40
