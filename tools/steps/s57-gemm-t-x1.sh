# Steps for tools/call.sh on a 1-GPU machine (written in session 56, never run): the experimental
# hopper_gemm_t (C^T = B^T A^T in 160 x 128 tiles, cuBLASLt's tile 29) checked against cuBLASLt and
# timed in turn with cuBLASLt's plan and the own GEMM, at the shapes where tile 29 leads (16384 rows)
# and where it is level (8192), raster groups 2 and 8; a small odd shape first for the checks
# (partial tiles in every direction). ~3 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s57-gemm-t-x1.sh
# (Each run bounded at 60 s: a wrong transaction count or phase in a never-run kernel spins its
# mbarrier waits for ever, and the first failure stops the rest.)
export HGEMM_T=1 HGEMM_SUSTAIN=10
H 1000 1032 520 2 2 5 &&
  for s in "16384 4096 7168" "16384 7168 4096" "8192 4096 7168" "16384 4096 3584"; do
    for g in 2 8; do H $s 2 $g 15 --json $OUT/r/gemm-t.json || break 2; done
  done
true
