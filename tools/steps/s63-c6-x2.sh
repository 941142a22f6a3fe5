# Steps for tools/call.sh on a 2-GPU machine (session 63, call 6): call 5 found 70B mm+rs M 16384 at
# TP = 2 (the fused form in transposed tiles with the straddle) at 1.11-1.14x the GEMM alone, above
# the sequential path, where call 2 had 1.033 on another machine and hopper_gemm's fused form read
# 1.045-1.051 beside it. Here: that shape alone, then with the straddle off (alt column
# SYMMEM_OVERLAP_RS_STRADDLE=0) both ways round, and against hopper_gemm's tiles again; 8B beside.
# ~4 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s63-c6-x2.sh
O plain SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs"
for first in 0 1; do
  O strad-first$first SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_STRADDLE=0" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs"
done
O gemmt0 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_GEMM_T=0" | grep -E "^==|mm\\+rs"
O plain2 SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs"
true
