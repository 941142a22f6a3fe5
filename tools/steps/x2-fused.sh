# Steps for tools/call.sh on a 2-GPU machine (session 54): matmul_reduce_scatter's fused form (the
# own GEMM, SYMMEM_OVERLAP_GEMM=own) against TP = 2's default, the ring of cuBLASLt GEMMs, both
# orders, now that the own GEMM defers its epilogue (session 37 measured the fused form 1-2% slower
# at TP = 2 except 70B M 16384, before the deferral). The ag+mm rows are the control (the own GEMM
# in both instances). ~4-5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/x2-fused.sh   (timeout 540; carry [".deps"])
O fused SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT=own
O fused-rev SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT=own SYMMEM_OVERLAP_ALT_FIRST=1
