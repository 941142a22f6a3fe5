# Steps for tools/call.sh on a 2-GPU machine (written in session 71; session 72 ran both tiers in
# s72-c1-x2.sh: passed, 79 s and 47 s): the ctest tiers multigpu_3ranks_2gpus and
# multigpu_own_gemm_3ranks_2gpus: every multi-rank suite at 3 ranks (an odd team; ranks 0 and 1 share
# GPU 0, rank 2 has GPU 1), then the own GEMM's reduce-scatter forms there (session 63's choices
# for 3+ ranks, so far run only looped back on one GPU): the only 3-rank runs a 2-GPU machine
# gives (3 on 3 GPUs last ran in session 45). ~6 minutes with the start (4 ranks on 2 GPUs took
# 122 s and the own-GEMM tier at 4 ranks 103-107 s in session 71). A failure that names a timeout on a rank of GPU 0
# may be starvation (NOTES, "Testing the multi-rank paths on one GPU"): run it again alone before
# reading it as a bug.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s72-3ranks-x2.sh
SUITE_STOP_S=330 SUITE12 "multigpu_3ranks_2gpus|multigpu_own_gemm_3ranks_2gpus"
true
