# Steps for tools/call.sh on a 2-GPU machine (session 56's last code): every test but the fault ones
# at 2 GPUs, then symmem-bench overlap at TP = 2 (both models, M 8192 / 16384) three times with the
# floor on cuBLASLt's fastest plan at the power cap (pick_floor; JSON text floor_plan). ~5 minutes
# with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s56-floor-x2.sh
FILTER="-Fault*" T 2 1
for i in 1 2 3; do O floor-$i SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm|ag"; done
true
