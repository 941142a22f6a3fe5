# Steps for tools/call.sh on a 2-GPU machine (session 60, call 1): Overlap* at 2 ranks, a GPU each
# (the finished word's test with its clusters-of-1 launch ran first here), then
# s60-t-counted-x1.sh (the counted instantiation of hopper_gemm_t against the uncounted one, probe
# and Nsight Compute). ~6 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s60-c1-x2.sh
FILTER="Overlap*" TLIMIT=150 T 2 1
if tests_passed; then
  . tools/steps/s60-t-counted-x1.sh
fi
true
