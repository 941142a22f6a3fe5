# Steps for tools/call.sh on a 2-GPU machine (session 59, call 4): the fused forms without the
# stream's writes of each count after the GEMM (HopperRowShards::finished instead). Overlap* at 2
# ranks, a GPU each (with the finished word's own test); both fused forms at 4 ranks on 2 GPUs;
# then symmem-bench overlap at TP = 2, the defaults against the fused form in transposed tiles
# forced (alt column), both ways round. ~6 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s59-c4-x2.sh
FILTER="Overlap*" TLIMIT=200 T 2 1
FILTER="Overlap.OwnGemm*Reduce*:Overlap.OwnGemmEpilogue*" TLIMIT=150 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
if tests_passed; then
  for first in 0 1; do
    O fin-f$first "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=fused;SYMMEM_OVERLAP_RS_GEMM_T=1" SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
  done
fi
true
