# Sourced by session 63's steps (tools/call.sh's helpers): matmul_reduce_scatter's own-GEMM forms
# looped back (symmem-hgemm-probe HGEMM_RS=1: partials landed beforehand, nothing waits) at TP = 4's
# shapes over 4 shards, row groups as detail::rs_groups: hopper_gemm_t's fused sum with its
# partials through the C slots against the stage ring, hopper_gemm's forms and cuBLASLt's whole GEMM.
for s in "8192 4096 3584 4" "16384 4096 3584 8" "8192 8192 7168 4" "16384 8192 7168 8"; do
  set -- $s
  HGEMM_RS=1 HGEMM_GROUPS=$4 HGEMM_SUSTAIN=10 H $1 $2 $3 2 2 15 0 4 --json $OUT/r/rs-loop.json
done
