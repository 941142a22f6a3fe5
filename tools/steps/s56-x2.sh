# Steps for tools/call.sh on a 2-GPU machine (session 56): session 55's review commit at 2 GPUs
# (every test but the fault ones), then TP = 2's 8B shapes at M 8192 / 16384, where both operations
# read 1.05-1.09x the GEMM alone: the probe (the GEMM alone, cuBLASLt's and the own GEMM with the
# operation's pushes beside them, the barrier, the fused form's GEMM), all_gather_matmul's own GEMM
# against its cuBLASLt form both ways round, and the own GEMM against cuBLASLt at all_gather_matmul's
# shapes on one GPU (2 row shards, as the operation runs it). ~5 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s56-x2.sh
FILTER="-Fault*" T 2 1
O probe SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384
O ag-alt SYMMEM_OVERLAP_ALT=cublas SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384
O ag-alt-first SYMMEM_OVERLAP_ALT=cublas SYMMEM_OVERLAP_ALT_FIRST=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384
for s in 0 2; do for g in 2 8; do HGEMM_SUSTAIN=10 build/symmem-hgemm-probe 16384 7168 4096 2 $g 20 0 $s --json $OUT/r/ag-shape.json 2>&1 | grep -E "^gemm|error"; done; done
HGEMM_SUSTAIN=10 build/symmem-hgemm-probe 8192 7168 4096 2 2 20 0 2 --json $OUT/r/ag-shape.json 2>&1 | grep -E "^gemm|error"
O again SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384
true
