# Steps for tools/call.sh on a 2-GPU machine (session 67's last call, the last commit: since call 4
# only comments, a knob's description and benchmark output changed): ctest gpu_1rank and
# multigpu_2ranks_2gpus, stopped after 150 s. ~3.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s67-c9-x2.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=150 tools/gpu_run.sh --no-bench --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -6
grep -E "\[  PASSED  \]|\[  FAILED  \]" $OUT/suite.log | sort | uniq -c
true
