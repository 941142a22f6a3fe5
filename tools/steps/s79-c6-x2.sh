# Steps for tools/call.sh on a 2-GPU machine after s79-c5-x2.sh (session 79, call 6, the final
# code, the machine still warm: the builds are incremental): the 4-rank own-GEMM tier, the tiers
# where 2 ranks share a GPU (multigpu, fault, debug checks, Python), the Python tiers at 2 GPUs,
# then the README's main job at 2 GPUs. Session 79 (at SUITE_STOP_S=250, without the own-GEMM
# tier): multigpu 2 on 1 GPU 93 s, fault 11, debug checks 89, python_gpu_2gpus 55, then the stop;
# the main job ~15 s. With the own-GEMM tier (107 s in session 71) and the two Python tiers not
# reached: ~480 s warm.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s79-c6-x2.sh
SUITE_STOP_S=500 SUITE12 "multigpu_own_gemm_4ranks_2gpus|multigpu_2ranks_1gpu|multigpu_fault_2ranks_1gpu|python_gpu_2ranks_1gpu|multigpu_debug_checks_2ranks_1gpu|python_gpu_2gpus|python_example_tp_mlp_2gpus"
MAINJOB 540
true
