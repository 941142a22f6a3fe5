# Steps for tools/call.sh on a 1-GPU machine (session 57): hopper_gemm_t with its epilogue deferred
# under the next tile's k-blocks (defer 2, the default) against the same kernel storing at once
# (HGEMM_VS=0), cuBLASLt's tile-29 plan (HGEMM_TILE=29) and hopper_gemm, at the 16384-row shapes
# where tile 29 leads, raster groups 2, 4, 8 and 16; odd and short-k shapes first for the checks.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s57-gemm-t-defer-x1.sh
export HGEMM_T=1 HGEMM_VS=0 HGEMM_SUSTAIN=10
H 1000 1032 520 2 2 5 && H 1000 1032 40 2 2 5 &&
  H 170 264 72 2 2 5 &&
  for s in "16384 4096 7168" "16384 7168 4096" "16384 4096 3584"; do
    for g in 2 8; do HGEMM_TILE=29 H $s 2 $g 15 --json $OUT/r/gemm-t.json || break 2; done
  done &&
  for g in 4 16; do HGEMM_TILE=29 H 16384 4096 7168 2 $g 15 --json $OUT/r/gemm-t.json; done
true
