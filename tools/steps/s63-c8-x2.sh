# Steps for tools/call.sh on a 2-GPU machine (session 63, call 8: the session's last code; after call
# 2 only host code changed): ctest gpu_1rank and multigpu_2ranks_2gpus, stopped after 110 s.
# ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s63-c8-x2.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=110 tools/gpu_run.sh --no-bench --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -4
grep -E "\[  PASSED  \]|\[  FAILED  \]" $OUT/suite.log | sort | uniq -c | head -10
true
