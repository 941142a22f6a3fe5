# Steps for tools/call.sh on a 2-GPU machine (session 58's final code, the unrolled k-loop): every
# test but the fault ones at 2 ranks, a GPU each; symmem-bench overlap at TP = 2 as it runs by
# default, twice. ~3.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s58-c8-x2.sh
FILTER="-Fault*" TLIMIT=200 T 2 1
for i in 1 2; do O final-$i SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\+mm|mm\+rs"; done
true
