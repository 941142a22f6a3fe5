# Steps for tools/call.sh on a 2-GPU machine (session 56): TP = 2's 8B forms, A/B with controls.
# Each run times two TensorParallels interleaved (symmem-bench overlap's alt column) at M 8192 and
# 16384: (1) all_gather_matmul's cuBLASLt form (SYMMEM_OVERLAP_GEMM=cublas) against its own-GEMM
# default, where matmul_reduce_scatter is the same form in both columns (the control of the alt
# column's bias); (2) matmul_reduce_scatter's fused form against its default (the cuBLASLt ring),
# where all_gather_matmul is the same in both (control). Each alt second and alt first, four times
# round. ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s56-ab-x2.sh
for i in 1 2 3 4; do
  for first in 0 1; do
    O ag-cublas-f$first-$i SYMMEM_OVERLAP_ALT=cublas SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|8B "
    O rs-fused-f$first-$i SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|8B "
  done
done
true
