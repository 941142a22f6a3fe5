# Steps for tools/call.sh on a 4-GPU machine (session 50, not run: no 4-GPU kind was lent): the
# deferred epilogue's merge check in one call, no second tree. Work tree s49-epi (or its merge into
# main). The GPU suite (ctest multigpu|gpu_1rank|python_gpu_4, stopped after 300 s), then
# symmem-bench overlap at M 8192 and 16384 with the default forms (the own GEMM under
# all_gather_matmul and under 70B's fused reduce-scatter), the alt column the same forms with the
# epilogue stored before the next tile (SYMMEM_OVERLAP_DEFER=0), both ways round; then 70B with
# the fused form's counts at k-block 8 against 3. ~9 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s50-merge-x4.sh   (timeout 590; carry [".deps"])
COMMIT=$C SYMMEM_CTEST_STOP_S=300 tools/gpu_run.sh --no-bench --ctest-args "-R multigpu|gpu_1rank|python_gpu_4" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -30
O defer SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=0"
O defer-rev SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=0" SYMMEM_OVERLAP_ALT_FIRST=1
O at8 SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_COUNT_AT=8 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_COUNT_AT=3"
# (Session 70) broadcast at 4 ranks since barrier_block waits patiently: push / direct against NCCL
# from 256 KiB (the table takes NCCL there at 3+ ranks; session 69's cliff was at 2 ranks).
A bc4 broadcast -b 262144 -e 134217728 -f 4
RS bc4
