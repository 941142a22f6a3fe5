# Steps for tools/call.sh on a 2-GPU machine after s79-c5-x2.sh (session 79, call 6, the final
# code): the tiers where 2 ranks share a GPU (multigpu, fault, debug checks, Python), the Python
# tiers at 2 GPUs,
# then the README's main job at 2 GPUs. ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s79-c6-x2.sh
SUITE_STOP_S=330 SUITE12 "multigpu_2ranks_1gpu|multigpu_fault_2ranks_1gpu|python_gpu_2ranks_1gpu|multigpu_debug_checks_2ranks_1gpu|python_gpu_2gpus|python_example_tp_mlp_2gpus"
MAINJOB 540
true
