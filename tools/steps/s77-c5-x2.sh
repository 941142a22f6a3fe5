# Steps for tools/call.sh on the warm 2-GPU machine after s77-c4-x2.sh (session 77, call 5, the
# final code): the tiers where 2 ranks share a GPU (multigpu, fault, Python), then the README's
# main job at 2 GPUs. ~4 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s77-c5-x2.sh
SUITE_STOP_S=200 SUITE12 "multigpu_2ranks_1gpu|multigpu_fault_2ranks_1gpu|python_gpu_2ranks_1gpu"
MAINJOB 480
true
