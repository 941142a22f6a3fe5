# Steps for tools/call.sh on a 2-GPU machine (session 59, call 3): where 8B matmul_reduce_scatter's
# fused form in transposed tiles loses ~4-5% against its GEMM looped back with the copies beside it.
# symmem-bench overlap's probe (SYMMEM_OVERLAP_PROBE=1) times, interleaved with the floor, that GEMM
# summing with its signals preset (t_summing), with the operation's bytes copied beside it, that
# without the barrier, and with the operation's tail of stream writes; twice. ~4 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s59-c3-x2.sh
for i in 1 2; do
  O probe-t-$i SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_RS_GEMM_T=1 SYMMEM_OVERLAP_M=8192,16384 |
    grep -E "^==|mm\\+rs"
done
true
