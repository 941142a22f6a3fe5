# Steps for tools/call.sh on a 2-GPU machine (session 71, call 2): the ctest tiers the suite
# leaves out and that last ran in session 53 (multigpu_4ranks_2gpus: every multi-rank suite at 4
# ranks, 2 a GPU, the closest a 2-GPU machine comes to the 4-GPU tiers; the debug-checks, fault
# and Python tiers with 2 ranks on one GPU; the two Python examples not in SUITE12), on the code
# with barrier_block's 16 us cap. ~7 minutes with the start.
SUITE_STOP_S=420 SUITE12 "multigpu_4ranks_2gpus|multigpu_debug_checks_2ranks_1gpu|multigpu_fault_2ranks_1gpu|python_gpu_2ranks_1gpu|python_example_dp_train_2gpus|python_example_triton_all_reduce_2gpus"
true
