# Steps for tools/call.sh on a 2-GPU machine (session 58, call 3): hopper_gemm_t's shards ending in
# tiles of 128 rows (schedule::t_choose_tall). Overlap* at 2 ranks (the transposed tests again with
# SYMMEM_OVERLAP_GEMM_T_TALL=1), the transposed tests at 2 on one GPU and the fused one at 4 on
# two; the probe's checks with forced tall counts and its times (the chosen count against 160-row
# tiles alone; m64n128 against m64n160 at 21120 rows, where both walk 5120 rows); then
# symmem-bench overlap at TP = 2 both ways round, twice: hopper_gemm (main) against the transposed
# tiles (alt), both operations (matmul_reduce_scatter's fused form in both columns). ~6 minutes.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s58-c3-x2.sh
FILTER="Overlap*" TLIMIT=240 T 2 1 SYMMEM_TIMEOUT_MS=30000
FILTER="Overlap.OwnGemmTransposed*" TLIMIT=150 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=60000
FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=150 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
( export HGEMM_T=1
  HGEMM_T_TALL=2 H 3000 2048 1000 2 8 5 0 3 && HGEMM_T_TALL=0 H 1000 1032 520 2 8 5 && HGEMM_T_TALL=1 H 2048 512 320 2 8 5 0 4 &&
  HGEMM_T_TALL=0 HGEMM_SUSTAIN=10 H 21120 4096 7168 2 8 10 --json $OUT/r/tall.json &&
  HGEMM_T_TALL=52 HGEMM_TILE=29 HGEMM_SUSTAIN=10 H 16384 4096 7168 2 8 10 0 2 --json $OUT/r/tall.json &&
  HGEMM_T_TALL=52 HGEMM_TILE=29 HGEMM_SUSTAIN=10 H 16384 7168 4096 2 8 10 0 2 --json $OUT/r/tall.json &&
  HGEMM_T_TALL=26 HGEMM_SUSTAIN=10 H 8192 7168 4096 2 8 10 0 2 --json $OUT/r/tall.json &&
  HGEMM_T_TALL=52 HGEMM_SUSTAIN=5 H 16384 14336 8192 2 8 5 0 2 --json $OUT/r/tall.json )
HGEMM_RS=1 HGEMM_GROUPS=4 HGEMM_SUSTAIN=10 H 16384 4096 7168 2 8 10 0 2 --json $OUT/r/tall.json
HGEMM_RS=1 HGEMM_GROUPS=4 HGEMM_SUSTAIN=10 H 8192 4096 7168 2 8 10 0 2 --json $OUT/r/tall.json
if tests_passed; then
  for i in 1 2; do for first in 0 1; do
    O tall-$i-f$first SYMMEM_OVERLAP_GEMM_T=0 SYMMEM_OVERLAP_OWN_RS=fused "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM_T=1;SYMMEM_OVERLAP_RS_GEMM_T=1" \
      SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\+mm|mm\+rs"
  done; done
fi
true
