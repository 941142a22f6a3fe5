# Steps for tools/call.sh on a 4-GPU machine (session 49): the deferred epilogue's merge check in one
# call. Work tree s49-epi (or its merge into main); first `tools/ab.sh prepare main`. The GPU suite
# (ctest multigpu|gpu_1rank|python_gpu_4, stopped after 300 s), then symmem-bench overlap at M 8192
# and 16384 with this tree and with main's, one after the other, then 70B with the fused form's
# counts at k-block 8 (SYMMEM_OVERLAP_COUNT_AT). ~10 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s49-merge-x4.sh   (timeout 590; carry [".deps"])
COMMIT=$C SYMMEM_CTEST_STOP_S=300 tools/gpu_run.sh --no-bench --ctest-args "-R multigpu|gpu_1rank|python_gpu_4" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -30
O epi SYMMEM_OVERLAP_M=8192,16384
BIN=main O base SYMMEM_OVERLAP_M=8192,16384
O epi-at8 SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_COUNT_AT=8
