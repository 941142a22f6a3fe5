# Steps for tools/call.sh on a 2-GPU machine (session 77, call 4, the final code): the 1- and 2-GPU
# suite (SUITE12) with the debug-checks tier at 2 ranks on one GPU. ~9 minutes with the start;
# s77-c5-x2.sh follows on the warm machine (the tiers where 2 ranks share a GPU, the main job).
#   COMMIT=<sha> bash tools/call.sh tools/steps/s77-c4-x2.sh
SUITE_STOP_S=440 SUITE12 "gpu_1rank|multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm_2ranks_1gpu|multigpu_own_gemm_4ranks_2gpus|python_gpu_2gpus|python_example_tp_mlp_2gpus|multigpu_debug_checks_2ranks_1gpu"
true
