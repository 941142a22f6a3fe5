# Steps for tools/call.sh on a 2-GPU machine (session 63, call 2: kSumC at any shard count): the
# GPU suite's 1- and 2-GPU tiers (ctest gpu_1rank, multigpu_2ranks_2gpus, the fault tier with
# Fault.AgreedStepsStopEveryRankTogether, the own GEMM's forms at 2 ranks on 1 GPU and 4 on 2,
# python_gpu_2gpus, the tensor-parallel example), stopped after 330 s; then symmem-bench overlap at
# TP = 2, both models, M 8192 / 16384. ~8 minutes with the start.
# (s61-c3-x2.sh's steps, then call 1's loopback again.)
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s63-c2-x2.sh
. tools/steps/s61-c3-x2.sh
. tools/steps/s63-rs-loop-tp4.sh
true
