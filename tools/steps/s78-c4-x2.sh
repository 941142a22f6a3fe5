# Steps for tools/call.sh on a 2-GPU machine (session 78, call 4, the final code): the 1- and 2-GPU
# suite (SUITE12) but the tiers where ranks share a GPU, which s78-c5-x2.sh runs at once after it
# on the warm machine (session 78 moved the debug-checks tier there: the Rooted tests made call 4
# of session 77's split too long for one call). ~9 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s78-c4-x2.sh
SUITE_STOP_S=420 SUITE12 "gpu_1rank|multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm_2ranks_1gpu|multigpu_own_gemm_4ranks_2gpus|python_gpu_2gpus|python_example_tp_mlp_2gpus"
true
