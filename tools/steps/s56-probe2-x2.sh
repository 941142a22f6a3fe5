# Steps for tools/call.sh on a 2-GPU machine (session 56): the probe's decomposition of TP = 2's
# 8B matmul_reduce_scatter again, now with the tuner in rounds and the floor on cuBLASLt's fastest
# plan (call 3 had neither), twice. ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s56-probe2-x2.sh
for i in 1 2; do O probe-$i SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|interleaved|block|mm\+rs  |ag\+mm  "; done
true
