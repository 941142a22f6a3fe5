# Steps for tools/call.sh on a 4-GPU machine (session 55, not run: no 4-GPU kind was lent): the
# epilogue ring on the own GEMM (SYMMEM_OVERLAP_OWN_RS=ring, opt-in) at TP = 4, where it differs
# from the fused form. Its tests at 4 ranks (a GPU a rank) and at 3 and at 8 on 4, then
# symmem-bench overlap at M 8192 and 16384 with the ring in the alt column against the default
# forms (8B: the sum form at M 8192 and the cuBLASLt ring at 16384; 70B: the fused form), both
# ways round, then 8B against the fused form (SYMMEM_OVERLAP_OWN_RS=fused in the main column).
# Looped back on one H200 (bench/results/*-s55c2-rs-forms-loopback.json) the ring's GEMM is
# 1.034-1.035x cuBLASLt's at 8B M 8192 (fused 1.046-1.048), 1.099 at M 16384 (fused 1.108; the own
# GEMM's weak shape), 0.993 at 70B M 8192. Take it where it beats the default by more than the
# noise in both orders. ~6 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s55-ring-x4.sh   (timeout 590; carry [".deps"])
FILTER="Overlap*" T 4 1; grep -h "\[ring\]" $OUT/t.log | head -1
FILTER="Overlap.OwnGemmEpilogue*:Overlap.OwnGemmReduce*" T 3 1
FILTER="Overlap.OwnGemmEpilogue*:Overlap.OwnGemmReduce*" TLIMIT=200 T 8 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
O ring SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=ring
O ring-rev SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=ring SYMMEM_OVERLAP_ALT_FIRST=1
[ "$(el)" -lt 480 ] && O ring-vs-fused SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=ring
true
