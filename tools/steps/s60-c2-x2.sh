# Steps for tools/call.sh on a 2-GPU machine (session 60, call 2): the fused forms without their
# barrier (credits). Overlap* at 2 ranks, a GPU each (the new Overlap.ReduceScatterFormsOneAfterAnother
# among them); the reduce-scatter forms at 4 ranks on the 2 GPUs (SYMMEM_OVERLAP_OWN_SHARED=1: the
# own GEMM's forms where ranks share a GPU); then symmem-bench overlap at 8B M 8192 / 16384,
# alternating with the tree before (.deps/ab/10781f8: tools/ab.sh prepare 10781f8), twice each.
# ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s60-c2-x2.sh
FILTER="Overlap*" TLIMIT=150 T 2 1
FILTER="Overlap.ReduceScatterFormsOneAfterAnother:Overlap.OwnGemm*ReduceScatter*" TLIMIT=150 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1
tests_passed && OAB credits 10781f8 barrier SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384
true
