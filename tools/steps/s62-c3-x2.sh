# Steps for tools/call.sh on a 2-GPU machine (session 62, call 3): the straddle without negative
# tensor-map coordinates (call 2: cudaErrorIllegalInstruction in its test). Its test first, then
# with the helpers off (SYMMEM_HGEMM_T_DEBUG=1: wrong sums expected, no fault) to place a fault;
# then Overlap* at 2 GPUs, the own GEMM's tests at 2 ranks on one GPU, and the A/B at M 16384.
# (SYMMEM_HGEMM_T_DEBUG existed in commits fdb0441-826bad9 only: run these steps on those.)
#   COMMIT=<sha> bash tools/call.sh tools/steps/s62-c3-x2.sh
FILTER="Overlap.OwnGemmTransposedReduceScatterStraddles" TLIMIT=60 T 2 1
if grep -q "FAILED\|rc [1-9]" "$OUT/summary.txt"; then
  FILTER="Overlap.OwnGemmTransposedReduceScatterStraddles" TLIMIT=60 T 2 1 SYMMEM_HGEMM_T_DEBUG=1
  grep -E "illegal|differs|rel|max" "$OUT/t.log" | head -8
  echo "== stopped"
else
FILTER="Overlap*" TLIMIT=100 T 2 1
FILTER="Overlap.Own*" TLIMIT=80 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1
if tests_passed; then
  . tools/steps/s62-straddle-ab.sh
fi
fi
true
