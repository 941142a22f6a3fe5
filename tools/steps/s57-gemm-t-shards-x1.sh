# Steps for tools/call.sh on a 1-GPU machine (session 57): hopper_gemm_t over row shards (the
# local shard from its own copy, A's rows of it poisoned) checked against cuBLASLt, rows that are
# and are not a multiple of its 160-row tiles; then timed against hopper_gemm over the same shards
# and cuBLASLt's tuned plan of the whole GEMM, at all_gather_matmul's Llama-3 shapes at TP = 2 and 4
# (M x Nc x K, shards = TP): the calibration of detail::gather_transposed.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s57-gemm-t-shards-x1.sh
export HGEMM_T=1 HGEMM_SUSTAIN=10
H 3000 2048 1000 2 8 5 0 3 && H 320 264 72 2 8 5 0 2 &&
  H 2048 1024 512 2 8 5 0 4 &&
  for s in "16384 7168 4096 2 8 15 0 2" "8192 7168 4096 2 8 15 0 2" "16384 14336 8192 2 8 9 0 2" "8192 14336 8192 2 8 15 0 2" \
           "16384 3584 4096 2 8 15 0 4" "8192 3584 4096 2 8 15 0 4" "16384 7168 8192 2 8 15 0 4" "8192 7168 8192 2 8 15 0 4"; do
    H $s --json $OUT/r/gemm-t-shards.json || break
  done
true
