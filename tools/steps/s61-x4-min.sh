# Steps for tools/call.sh on a 4-GPU machine with little device time left (~4 minutes): the
# overlap and MoE GPU tests at 4 ranks on GPUs of their own, nothing else (no 4-GPU run since
# session 45; s50-merge-x4.sh is the full call).
#   COMMIT=<sha> bash tools/call.sh tools/steps/s61-x4-min.sh   (timeout 220; carry [".deps"])
FILTER="Overlap*" TLIMIT=90 T 4 1
FILTER="Moe*" TLIMIT=60 T 4 1
true
