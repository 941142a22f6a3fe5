# Steps for tools/call.sh on a 2-GPU machine (session 57): all_gather_matmul at TP = 2 with the
# transposed tiles against hopper_gemm, both ways round, twice: 8B (alt: SYMMEM_OVERLAP_GEMM_T=1)
# and 70B (alt: =0), M 8192 and 16384. ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s57-gemm-t-ab-x2.sh
for i in 1 2; do
  for first in 0 1; do
    O ab8-$i-f$first SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM_T=1 SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\+mm"
    O ab70-$i-f$first SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM_T=0 SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\+mm"
  done
done
true
