# Steps for tools/call.sh on a 2-GPU machine (session 79, call 5, the final code): the 1- and 2-GPU
# C++ tiers but those where ranks share a GPU and the Python ones, which s79-c6-x2.sh runs at once
# after it on the warm machine. ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s79-c5-x2.sh
SUITE_STOP_S=420 SUITE12 "gpu_1rank|multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm_2ranks_1gpu|multigpu_own_gemm_4ranks_2gpus"
true
