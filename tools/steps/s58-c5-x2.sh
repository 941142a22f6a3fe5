# Steps for tools/call.sh on a 2-GPU machine (session 58, call 5): the tall counts chosen with a 0.5%
# margin (70B matmul_reduce_scatter M 16384 back to call 3's 48, all_gather_matmul 70B M 8192 now
# transposed with 24). Overlap* at 2 ranks, then symmem-bench overlap at TP = 2 as it runs by
# default, hopper_gemm's tiles in the alt column (SYMMEM_OVERLAP_GEMM_T=0), both ways round.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s58-c5-x2.sh
FILTER="Overlap*" TLIMIT=200 T 2 1
for first in 0 1 0; do
  O final-f$first SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM_T=0 SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\+mm|mm\+rs"
done
true
