# Steps for tools/call.sh on a 2-GPU machine (session 60, call 6): symmem-bench overlap at TP = 2 as
# it runs by default on the session's final code (the fused forms without their barrier), twice,
# M 8192 / 16384. ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s60-c5-x2.sh
for i in 1 2; do O final-$i SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"; done
true
