# Steps for tools/call.sh on a 2-GPU machine (session 58, call 6): the fused sum on hopper_gemm_t
# handing the turn over before its drain and adds (2 and 3 ranks). Its GPU test at 2 ranks, 2 on
# one GPU, 3 and 4 on two; the forms looped back; then symmem-bench overlap at TP = 2 with the
# fused form in transposed tiles forced in the alt column (the defaults in the main one), both ways
# round. ~5 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s58-c6-x2.sh
FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=100 T 2 1 SYMMEM_TIMEOUT_MS=20000
FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=120 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=60000
FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=120 T 3 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=120 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
HGEMM_RS=1 HGEMM_GROUPS=4 HGEMM_SUSTAIN=10 H 16384 4096 7168 2 8 10 0 2 --json $OUT/r/rs-loop.json
HGEMM_RS=1 HGEMM_GROUPS=4 HGEMM_SUSTAIN=10 H 8192 4096 7168 2 8 10 0 2 --json $OUT/r/rs-loop.json
if tests_passed; then
  for first in 0 1; do
    O rst-f$first "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=fused;SYMMEM_OVERLAP_RS_GEMM_T=1" SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\\+rs"
  done
fi
true
