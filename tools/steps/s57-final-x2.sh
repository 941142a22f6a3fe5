# Steps for tools/call.sh on a 2-GPU machine (session 57's last code): every test but the fault ones
# at 2 ranks (a GPU each), then symmem-bench overlap at TP = 2, both models, M 8192 / 16384, twice,
# as they run by default (8B M 16384's all_gather_matmul now in the transposed tiles). ~5 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s57-final-x2.sh
FILTER="-Fault*" TLIMIT=200 T 2 1
for i in 1 2; do O final-$i SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm|ag"; done
true
