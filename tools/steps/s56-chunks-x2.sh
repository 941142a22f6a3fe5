# Steps for tools/call.sh on a 2-GPU machine (session 56): the knob's refusal and the overlap and MoE
# tests at 2 GPUs; then TP = 2's 8B matmul_reduce_scatter (the cuBLASLt ring, 1.05-1.10x the GEMM
# alone at M 16384): the probe's interleaved decomposition (the GEMM alone, the ring's chain of
# GEMMs, the chain with its pushes, the operation) at 2 and 4 parts a step, then 4 and 3 parts
# against the default 2 (alt column), both ways round. ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s56-chunks-x2.sh
FILTER="Overlap*:Moe*" T 2 1
O probe2 SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|interleaved|mm\+rs  "
O probe4 SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_RS_CHUNKS=4 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|interleaved|mm\+rs  "
for i in 1 2 3; do
  for c in 4 3; do
    for first in 0 1; do
      O chunks$c-f$first-$i SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_CHUNKS=$c SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\+rs  "
    done
  done
done
O probe2b SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=16384 | grep -E "^==|interleaved|mm\+rs  "
true
