# Steps for tools/call.sh on a 2-GPU machine (written in session 58, not yet run): where 8B
# matmul_reduce_scatter's ~4% between the fused form looped back (1.047x cuBLASLt's whole GEMM at
# M 16384) and the operation (1.086-1.095) goes. On both GPUs at once, the forms looped back with
# and without a second stream copying the peer block's rows to the other GPU (HGEMM_RS_PEER: the
# operation's bytes without its counts, waits and signals); then the operation in the same call,
# the fused form in transposed tiles forced. ~4 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s59-rs-split-x2.sh
for s in "16384 4096 7168" "8192 4096 7168"; do
  for d in 0 1; do
    HGEMM_DEVICE=$d HGEMM_RS_PEER=$((1 - d)) HGEMM_RS=1 HGEMM_GROUPS=4 HGEMM_SUSTAIN=10 timeout 120 \
      build/symmem-hgemm-probe $s 2 8 10 0 2 --json "$OUT/r/rs-split.json" > "$OUT/p$d.log" 2>&1 &
  done
  wait
  echo "== rs split $s"; grep -h "rs forms" "$OUT"/p0.log "$OUT"/p1.log
done
O rs-op SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_RS_GEMM_T=1 SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\\+rs"
true
