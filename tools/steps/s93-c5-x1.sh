# Session 93 (one GPU, ~200 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the random
# interleaving's final code (an unused variable gone, the counts uploaded by one cudaMemcpy) at 2,
# 3, 5 and 8 ranks on the GPU.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s93-c5-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000
for r in 2 3 5 8; do TLIMIT=60 RT $r $r; done
true
