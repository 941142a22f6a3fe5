# Steps for tools/call.sh on a 1-GPU machine (session 56): every cuBLASLt candidate of the overlap's
# GEMM shapes timed at the power cap (symmem-hgemm-probe HGEMM_CANDIDATES=1: graphs of 10 replayed in
# turn, 20 rounds), against the plan symmem's Gemm keeps (tuned on single launches) and the own
# GEMM: TP = 2's 8B mm+rs parts, blocks and floor, all_gather_matmul's shard and floor, TP = 4's
# 8B shapes. ~4 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s56-cands-x1.sh
for s in "4096 4096 7168" "2048 4096 7168" "8192 4096 7168" "16384 4096 7168" "8192 7168 4096" "16384 7168 4096" "16384 4096 3584" "8192 4096 3584" "2048 4096 3584"; do
  echo "== $s at $(el) s"; HGEMM_CANDIDATES=1 HGEMM_SUSTAIN=10 build/symmem-hgemm-probe $s 2 2 20 --json $OUT/r/cands.json 2>&1 | grep -vE "^gemm|plan:"
done
true
