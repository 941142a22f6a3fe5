# Steps for tools/call.sh on a 4-GPU machine: the first call there (written in session 71; no
# 4-GPU kind since session 45). (1) broadcast at 4 ranks, push / direct against NCCL from 256 KiB
# (the table takes NCCL there at 3+ ranks; barrier_block's patient wait ended the cliff at 2 ranks
# in session 70: does 4 have one?); (2) the tiers only a 4-GPU machine runs, in ctest's order: 3
# ranks on 3 GPUs, 4 on 4, 8 on 4 (2 a GPU), then the Python tier and the tensor-parallel example
# at 4, and (session 92) the fault tests at 4 ranks a GPU each (the NCCL watchdog's at 4 first)
# (the 1- and 2-GPU tiers, 4 ranks on 2 GPUs included, passed in session 71 on 2 x H200); (3)
# the README's main job at 4 GPUs. ~9 minutes with the start (8 on 4 is the long one: 4 on 2 took
# 122 s in session 71).
#   COMMIT=<sha> bash tools/call.sh tools/steps/s71-x4-first.sh   (timeout 600; carry [".deps"])
A bc4 broadcast -b 262144 -e 134217728 -f 4
RS bc4
SUITE_STOP_S=400 SUITE12 "multigpu_3ranks_3gpus|multigpu_4ranks_4gpus|multigpu_8ranks_4gpus|multigpu_fault_4ranks_4gpus|python_gpu_4gpus|python_example_tp_mlp_4gpus"
MAINJOB 530
true
