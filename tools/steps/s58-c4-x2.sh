# Steps for tools/call.sh on a 2-GPU machine (session 58's last library code): every test but the
# fault ones at 2 ranks, a GPU each; hopper_gemm_t at 70B all_gather_matmul's shape with the tall
# count the costed walk now chooses against call 3's (44); then symmem-bench overlap at TP = 2 as
# it runs by default (both own forms in transposed tiles where the walk model says), twice.
# ~6 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s58-c4-x2.sh
FILTER="-Fault*" TLIMIT=300 T 2 1
HGEMM_T=1 HGEMM_T_TALL=44 HGEMM_SUSTAIN=5 H 16384 14336 8192 2 8 5 0 2 --json $OUT/r/tall.json
HGEMM_T=1 HGEMM_T_TALL=44 HGEMM_SUSTAIN=5 H 16384 8192 14336 2 8 5 0 2 --json $OUT/r/tall.json
for i in 1 2; do O final-$i SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\+mm|mm\+rs"; done
true
