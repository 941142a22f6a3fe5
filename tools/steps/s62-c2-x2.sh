# Steps for tools/call.sh on a 2-GPU machine (session 62, call 2): the fused form's straddle
# (HopperRowShards::straddle: one row of 160-row tiles across the two shards, its own rows summed by
# the producer's idle warps). Overlap* at 2 ranks on their own GPUs (OwnGemmTransposedReduceScatter
# Straddles first), the own GEMM's tests at 2 ranks on one GPU, the straddle test at 4 ranks on 2
# GPUs (applies nowhere there); then symmem-bench overlap at M 16384, both models, the straddle
# against none in one process (SYMMEM_OVERLAP_ALT), both ways round, twice.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s62-c2-x2.sh
FILTER="Overlap.OwnGemmTransposedReduceScatterStraddles" TLIMIT=60 T 2 1
FILTER="Overlap*" TLIMIT=100 T 2 1
FILTER="Overlap.Own*" TLIMIT=80 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1
FILTER="Overlap.OwnGemmTransposedReduceScatterStraddles" TLIMIT=60 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
if tests_passed; then
  . tools/steps/s62-straddle-ab.sh
fi
true
