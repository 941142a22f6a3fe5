# Steps for tools/call.sh on a 2-GPU machine (session 60, call 3): the fused forms' credits against
# their barrier (SYMMEM_OVERLAP_RS_BARRIER=1) in one process, interleaved (the alt column), both
# ways round: 8B four times each way, 70B twice, M 8192 / 16384. Overlap.ReduceScatter* first at 2
# ranks (the knob's path). ~6 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s60-c3-x2.sh
FILTER="Overlap.ReduceScatter*:Overlap.OwnGemmTransposedReduceScatter*" TLIMIT=100 T 2 1 SYMMEM_OVERLAP_RS_BARRIER=1
if tests_passed; then
  for i in 1 2 3 4; do
    O cr-vs-bar-8b-$i SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_BARRIER=1" | grep -E "^==|mm\\+rs"
    O bar-vs-cr-8b-$i SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_RS_BARRIER=1 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_BARRIER=0" | grep -E "^==|mm\\+rs"
  done
  for i in 1 2; do
    O cr-vs-bar-70b-$i SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_BARRIER=1" | grep -E "^==|mm\\+rs"
    O bar-vs-cr-70b-$i SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_RS_BARRIER=1 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_BARRIER=0" | grep -E "^==|mm\\+rs"
  done
fi
true
