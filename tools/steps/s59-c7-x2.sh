# Steps for tools/call.sh on a 2-GPU machine (session 59, call 7: the session's code): every test
# but the fault ones at 2 ranks, a GPU each; symmem-bench overlap at TP = 2 as it runs by default
# (8B matmul_reduce_scatter now fused in transposed tiles), twice; 70B M 16384's probe (where its
# fused form's time goes). ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s59-c7-x2.sh
FILTER="-Fault*" TLIMIT=200 T 2 1
if tests_passed; then
  for i in 1 2; do O final-$i SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"; done
  O probe-70b SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs"
fi
true
