# Steps for tools/call.sh on a 2-GPU machine (session 62, call 7, ~300 s of device time left): the
# straddle's helpers waiting for all of their cluster's straddle tiles (68 column units: some
# clusters run two). Overlap* at 2 ranks on their own GPUs (the straddle's test first), the own
# GEMM's tests at 2 ranks on one GPU.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s62-c7-x2.sh
FILTER="Overlap.OwnGemmTransposedReduceScatterStraddles" TLIMIT=60 T 2 1
FILTER="Overlap*" TLIMIT=90 T 2 1
FILTER="Overlap.Own*" TLIMIT=80 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1
true
