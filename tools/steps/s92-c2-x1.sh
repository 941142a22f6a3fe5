# Session 92 (one GPU, ~260 s): the fault tests made for any team size (the last rank skips the
# call or dies; before, 3 of the 7 ran at exactly 2 ranks): at 2, 3, 4 and 8 ranks on the GPU.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s92-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
FILTER='Fault.*' TLIMIT=90 T 2 2
FILTER='Fault.*' TLIMIT=90 T 3 3
FILTER='Fault.*' TLIMIT=90 T 4 4
FILTER='Fault.*' TLIMIT=150 T 8 8 SYMMEM_TIMEOUT_MS=100000
true
