# Steps for tools/call.sh on a 2-GPU machine (session 57): the overlap's GPU tests at 2 ranks (a GPU
# each; then the own-GEMM ones at 2 ranks on one GPU, where hopper_gemm_t runs on 128 SMs), then
# symmem-bench overlap at TP = 2: 70B with all_gather_matmul's transposed tiles (the default there
# now) against hopper_gemm (alt: SYMMEM_OVERLAP_GEMM_T=0), both ways round; 8B with the transposed
# tiles forced in the alt column; both models once as they run by default. ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s57-gemm-t-x2.sh
FILTER="Overlap*" T 2 1
FILTER="Overlap.Own*" T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1
for first in 0 1; do
  O gt70-f$first SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM_T=0 SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm|ag"
done
O gt8-f0 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM_T=1 SYMMEM_OVERLAP_ALT_FIRST=0 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm|ag"
O tp2 SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm|ag"
true
