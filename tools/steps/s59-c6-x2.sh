# Steps for tools/call.sh on a 2-GPU machine (session 59, call 6): (1) 8B matmul_reduce_scatter at
# M 8192, the fused form on hopper_gemm against it in transposed tiles, each in either column (the
# cuBLASLt ring, its default, was level to 2% behind the transposed form in call 5); (2) 70B at
# M 16384 by default, the benchmark's old order of programs (SYMMEM_BENCH_ORDER=rotate) against
# the shuffled one, twice in turn: call 5 read 70B mm+rs M 16384 at 1.13-1.15x in both columns
# (shuffled), call 4 at 1.06-1.09 (rotated). ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s59-c6-x2.sh
F0="SYMMEM_OVERLAP_OWN_RS=fused;SYMMEM_OVERLAP_RS_GEMM_T=0"; F1="SYMMEM_OVERLAP_OWN_RS=fused;SYMMEM_OVERLAP_RS_GEMM_T=1"
O f-main SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_RS_GEMM_T=0 "SYMMEM_OVERLAP_ALT=$F1" SYMMEM_OVERLAP_M=8192 | grep -E "^==|mm\\+rs"
O f-alt SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_RS_GEMM_T=1 "SYMMEM_OVERLAP_ALT=$F0" SYMMEM_OVERLAP_M=8192 | grep -E "^==|mm\\+rs"
for i in 1 2; do
  for o in rotate shuffle; do
    O order-$o-$i SYMMEM_BENCH_ORDER=$o SYMMEM_OVERLAP_MODELS=70B "SYMMEM_OVERLAP_ALT=$F1" SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs"
  done
done
true
