# Steps for tools/call.sh on a 2-GPU machine (session 61, call 7): hopper_gemm_t's kSumFirst (the
# fused sum's partial stages before the summed tile's k-blocks at 2 shards). Overlap* at 2 ranks
# on their own GPUs, the own GEMM's tests at 2 ranks on one GPU and the reduce-scatter's at 4 on
# 2 (the old order, 4 shards); then, against the tree before (.deps/ab/pre), symmem-bench overlap
# 8B M 8192 / 16384 alternating, twice, and the fused form's probe at M 16384 (t_summing against
# t_counting). ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s61-c7-x2.sh
FILTER="Overlap*" TLIMIT=150 T 2 1
FILTER="Overlap.Own*" TLIMIT=120 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1
FILTER="Overlap.OwnGemmTransposedReduce*:Overlap.ReduceScatterFormsOneAfterAnother" TLIMIT=150 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
if tests_passed; then
  OAB new pre pre SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384
  O probe-sf SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs|# probe 8B mm\\+rs M 16384: cuBLAS"
fi
true
