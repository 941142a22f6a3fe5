# Steps for tools/call.sh on a 2-GPU machine (session 67, call 3): the own GEMM's two tile shapes
# in the operation at 8B, after a near-idle millisecond and back to back. Call 2 looped back at 8B
# mm+rs M 8192 after idle: hopper_gemm_t's fused GEMM 4.6% slower than hopper_gemm's (660 / 631 us,
# no counts), level at the cap (732.5 / 732.6). Main: the defaults (transposed tiles at 8B); alt:
# hopper_gemm in both operations (SYMMEM_OVERLAP_GEMM_T=0, SYMMEM_OVERLAP_RS_GEMM_T=0), both ways
# round (SYMMEM_OVERLAP_ALT_FIRST), twins 2.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s67-c3-x2.sh
export SMI_LOG=1
for idle in 1000 0; do
  for first in 0 1; do
    O t-idle$idle-f$first SYMMEM_BENCH_IDLE_US=$idle SYMMEM_OVERLAP_ALT_FIRST=$first "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM_T=0;SYMMEM_OVERLAP_RS_GEMM_T=0" \
      SYMMEM_OVERLAP_TWINS=2 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|GPU"
    TW t-idle$idle-f$first
  done
done
true
