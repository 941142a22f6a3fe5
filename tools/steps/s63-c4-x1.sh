# Steps for tools/call.sh on a 1-GPU machine (session 63, call 4): all_gather_matmul's own GEMM over
# row shards (no waits) in transposed tiles against hopper_gemm's and cuBLASLt's whole GEMM
# (HGEMM_T=1 with shards) at TP = 4's and TP = 8's shapes, where detail::gather_transposed's walk
# model decides unmeasured; and matmul_reduce_scatter's forms looped back (HGEMM_RS=1) at TP = 2's
# 70B M 8192, where the model keeps hopper_gemm's tiles (measured so in session 59, before kSumC).
# ~4 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s63-c4-x1.sh
for s in "8192 3584 4096 4" "16384 3584 4096 4" "8192 7168 8192 4" "16384 7168 8192 4" \
         "8192 1792 4096 8" "16384 1792 4096 8" "8192 3584 8192 8" "16384 3584 8192 8"; do
  set -- $s
  HGEMM_T=1 HGEMM_SUSTAIN=10 H $1 $2 $3 2 8 15 0 $4 --json $OUT/r/gather-t.json
done
for i in 1 2; do
  HGEMM_RS=1 HGEMM_GROUPS=8 HGEMM_SUSTAIN=10 H 8192 8192 14336 2 2 15 0 2 --json $OUT/r/rs-loop.json
  HGEMM_RS=1 HGEMM_GROUPS=16 HGEMM_SUSTAIN=10 H 16384 8192 14336 2 2 15 0 2 --json $OUT/r/rs-loop.json
done
true
