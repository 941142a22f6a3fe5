# Steps for tools/call.sh on a 2-GPU machine (session 79, call 5, the final code): the 1- and 2-GPU
# C++ tiers but the 4-rank own-GEMM tier, those where ranks share a GPU and the Python ones, which
# s79-c6-x2.sh runs at once after it on the warm machine. Session 79: the builds (call.sh's and
# gpu_run.sh's) ~250 s, these tiers 313 s (gpu_1rank 40, 2 ranks 64, 3 ranks 138, fault 14,
# own-GEMM 2 on 1 GPU 57): ~570 s with the start (ctest stopped at 340 s). (Run as committed first, with the 4-rank
# own-GEMM tier too, it reached the call's 590 s limit inside that tier.)
#   COMMIT=<sha> bash tools/call.sh tools/steps/s79-c5-x2.sh
SUITE_STOP_S=340 SUITE12 "gpu_1rank|multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm_2ranks_1gpu"
true
