# Session 89, one H200, ~480 s: the 1-GPU tiers on main's final code (session 89's calls 1-2 ran the
# 2-GPU ones): 2 and 4 ranks on the GPU, the debug checks, the own-GEMM and fault tiers at 2 ranks
# on it, the Python tier and the MoE layer example at 2 ranks on it.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s89-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=420 SUITE12 "multigpu_2ranks_1gpu|multigpu_4ranks_1gpu|multigpu_debug_checks_2ranks_1gpu|multigpu_own_gemm_2ranks_1gpu|multigpu_fault_2ranks_1gpu|python_gpu_2ranks_1gpu|python_example_moe_layer_2ranks_1gpu"
true
