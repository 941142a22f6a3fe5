# Steps for tools/call.sh on a 2-GPU machine (session 63, call 7): 70B mm+rs M 16384 at TP = 2 on
# another machine (call 5's read the default, transposed tiles with the straddle, at 1.11-1.14x the
# GEMM alone; calls 2 and 6's 1.008-1.033): the default alone, then beside hopper_gemm's fused form
# (alt column SYMMEM_OVERLAP_RS_GEMM_T=0) both ways round; then the fused form's GEMM in transposed
# tiles with its peer block's rows copied to the other GPU beside it, on both GPUs at once
# (HGEMM_RS_PEER: the operation's bytes without its counts, waits and signals). ~3 minutes.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s63-c7-x2.sh
O plain SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs"
for first in 0 1; do
  O t0-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_GEMM_T=0" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs"
done
for d in 0 1; do
  HGEMM_RS=1 HGEMM_GROUPS=16 HGEMM_SUSTAIN=10 HGEMM_DEVICE=$d HGEMM_RS_PEER=$((1 - d)) timeout 90 build/symmem-hgemm-probe 16384 8192 14336 2 2 15 0 2 \
    --json $OUT/r/rs-peer.json > $OUT/p$d.log 2>&1 &
done
wait
echo "== probes with copies beside at $(el) s"; grep -hE "rs forms|error|Error" $OUT/p0.log $OUT/p1.log
true
