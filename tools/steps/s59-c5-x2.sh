# Steps for tools/call.sh on a 2-GPU machine (session 59, call 5): Harness::time_graphs now shuffles
# each round's order (a program always followed the same one before). matmul_reduce_scatter's
# defaults against the fused form in transposed tiles forced, that form in each column in turn,
# twice: 8B (the cuBLASLt ring by default) without the stream's count writes; 70B M 16384 (that
# form both ways) shows what is left of the columns' bias. ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s59-c5-x2.sh
FT="SYMMEM_OVERLAP_OWN_RS=fused;SYMMEM_OVERLAP_RS_GEMM_T=1"
for i in 1 2; do
  O ft-alt-$i "SYMMEM_OVERLAP_ALT=$FT" SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\\+rs"
  O ft-main-$i SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_RS_GEMM_T=1 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=;SYMMEM_OVERLAP_RS_GEMM_T=" \
    SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\\+rs"
done
true
