# Steps for tools/call.sh on a 2-GPU machine (session 62, call 5): the straddle's helpers polling
# quietly (relaxed loads 4 us apart, one acquire fence: device::wait_until_quiet) after call 4
# showed them to cost ~4% (helpers off: the straddle 1.8% ahead). Its test and Overlap* at 2 GPUs,
# the own GEMM's tests at 2 ranks on one GPU; then the A/B at M 16384, both models, both ways
# round, twice; and once more with the helpers off for reference.
# (SYMMEM_HGEMM_T_DEBUG existed in commits fdb0441-826bad9 only: run these steps on those.)
#   COMMIT=<sha> bash tools/call.sh tools/steps/s62-c5-x2.sh
FILTER="Overlap*" TLIMIT=100 T 2 1
FILTER="Overlap.Own*" TLIMIT=80 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1
if tests_passed; then
  . tools/steps/s62-straddle-ab.sh
  O dbg-st SYMMEM_HGEMM_T_DEBUG=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_STRADDLE=0 | grep -E "^==|mm\\+rs"
fi
true
