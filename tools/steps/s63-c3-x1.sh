# Steps for tools/call.sh on a 1-GPU machine (session 63, call 3): matmul_reduce_scatter's own-GEMM
# forms looped back (HGEMM_RS=1: partials landed beforehand, nothing waits) where calls 1 and 2 did
# not reach: TP = 4's M 2048 / 4096 over 4 shards and TP = 8's shapes (8B K 1792, 70B K 3584) over
# 8, both models, row groups as detail::rs_groups; then the fused form in transposed tiles at 3
# ranks on the one GPU (kSumC with real waits, 3 a GPU). ~5 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s63-c3-x1.sh
for s in "2048 4096 3584 4 1" "4096 4096 3584 4 2" "2048 8192 7168 4 1" "4096 8192 7168 4 2" \
         "8192 4096 1792 8 2" "16384 4096 1792 8 4" "8192 8192 3584 8 2" "16384 8192 3584 8 4"; do
  set -- $s
  HGEMM_RS=1 HGEMM_GROUPS=$5 HGEMM_SUSTAIN=10 H $1 $2 $3 2 2 15 0 $4 --json $OUT/r/rs-loop.json
done
FILTER='Overlap.OwnGemmTransposedReduceScatterMatchesTheReference' TLIMIT=120 T 3 3 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
true
