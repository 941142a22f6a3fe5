# Steps for tools/call.sh on a 2-GPU machine (session 61, call 8, ~250 s of device time left):
# hopper_gemm_t's kSumC (the fused sum's partial through the consumer's C slots at 2 shards).
# Overlap* at 2 ranks on their own GPUs, the own GEMM's tests at 2 ranks on one GPU, the
# transposed reduce-scatter at 4 ranks on 2 GPUs (the ring order); then symmem-bench overlap 8B
# against the tree before (.deps/ab/39e5445), alternating, twice.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s61-c8-x2.sh
FILTER="Overlap*" TLIMIT=100 T 2 1
FILTER="Overlap.Own*" TLIMIT=60 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1
FILTER="Overlap.OwnGemmTransposedReduce*:Overlap.ReduceScatterFormsOneAfterAnother" TLIMIT=60 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
tests_passed && OAB c 39e5445 ring SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384
true
