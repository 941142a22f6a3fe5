# Steps for tools/call.sh on a 2-GPU machine (session 66, call 6): the GPU suite at 4 ranks on 2
# GPUs, every test but the fault ones (ctest's multigpu_4ranks_2gpus, last run whole in session
# 54: the 4-rank paths of the collectives, MoE and overlap on today's code), then the MoE tests at
# 8 ranks, 4 a GPU (the 8-rank protocols; issue 10 asks for 8 ranks on 4 GPUs). ~5 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s66-c6-x2.sh
FILTER='-Fault.*' TLIMIT=240 T 4 2
FILTER='Moe*' TLIMIT=120 T 8 4
true
