# Steps for tools/call.sh on a 2-GPU machine (written in session 57, never run): matmul_reduce_scatter's
# fused form on hopper_gemm_t (SYMMEM_OVERLAP_RS_GEMM_T=1, EXPERIMENTAL) in its GPU test at 2 ranks
# (a GPU each), at 2 ranks on one GPU and at 4 on 2; then, if they pass, symmem-bench overlap at
# TP = 2 with it in the alt column (the fused form forced on both columns: SYMMEM_OVERLAP_OWN_RS=fused),
# both ways round. ~5 minutes with the start. (A failure in the test reads as a timeout of the own
# block's partial waits first: the counts' targets, hopper_t_group_count, or the stage positions.)
#   COMMIT=<sha> bash tools/call.sh tools/steps/s58-rs-t-x2.sh
FILTER="Overlap.OwnGemmTransposed*" TLIMIT=120 T 2 1 SYMMEM_TIMEOUT_MS=20000
FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=150 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=60000
FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=150 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
if grep -q "FAILED\|rc [1-9]" "$OUT/summary.txt"; then echo "== tests failed: no benchmark"; else
  for first in 0 1; do
    O rst-f$first SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_GEMM_T=1 SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\\+rs"
  done
fi
true
