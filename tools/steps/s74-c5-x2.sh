# Steps for tools/call.sh on a 2-GPU machine (session 74, call 5, the session's last): the 1- and
# 2-GPU suite (SUITE12: gpu_1rank, multigpu at 2 ranks on 2 GPUs and 3 on 2, the fault, own-GEMM,
# Python and example tiers) on the final library and test code; the main job ran on the same
# library in call 4. ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s74-c5-x2.sh
SUITE12
true
