# Steps for tools/call.sh on a 4-GPU machine (written in session 60, never run): the credits
# (matmul_reduce_scatter's fused forms without their barrier, src/overlap/credits.cuh) at 3 and 4
# ranks on GPUs of their own and 8 on 4: the reduce-scatter tests; then at TP = 4, 8B and 70B M
# 8192 / 16384, the credits against SYMMEM_OVERLAP_RS_BARRIER=1 in the alt column, both ways round;
# (the A/B of 8B's fused form against the cuBLASLt forms that stood here is in s63-forms-x4.sh since
# session 63 made it the default at 8B M 8192). ~5 minutes with the start. Run after s50-merge-x4.sh.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s61-credits-x4.sh
F="Overlap.ReduceScatterFormsOneAfterAnother:Overlap.OwnGemm*ReduceScatter*:Overlap.GemmsWithCommunication*"
FILTER="$F" TLIMIT=120 T 4 1
FILTER="$F" TLIMIT=120 T 3 1
FILTER="Overlap.ReduceScatterFormsOneAfterAnother" TLIMIT=150 T 8 2 SYMMEM_OVERLAP_OWN_SHARED=1
if tests_passed; then
  for i in 1 2; do
    O cr-vs-bar4-$i SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_BARRIER=1" | grep -E "^==|mm\\+rs"
    O bar-vs-cr4-$i SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_RS_BARRIER=1 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_BARRIER=0" | grep -E "^==|mm\\+rs"
  done
fi
true
