# Steps for tools/call.sh on a 1-GPU machine (session 55, second): the epilogue ring's protocol
# with real waits in one process (Overlap.EpilogueRingOfVirtualRanksOnOneGpu: 3 and 4 virtual
# ranks, each its own resident GEMM), the one-GPU own-GEMM tests, then the ring's test at 3 ranks
# sharing the GPU, cases named, with a long wait bound: slow (time slices) or stuck?
#   COMMIT=<sha> bash tools/call.sh tools/steps/s55-ring2-x1.sh
FILTER="Overlap.EpilogueRingOfVirtualRanks*:Overlap.OwnGemmRowShards*" T 1 1; grep -h "Failure\|virtual" $OUT/t.log | head -5
FILTER="Overlap.OwnGemmEpilogue*" TLIMIT=300 T 3 3 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=250000 SYMMEM_TEST_CASES=1; grep -h "\[case\]\|\[ring\]" $OUT/t.log | tail -12
