# Steps for tools/call.sh on a 1-GPU machine (session 75, call 5): the tiers where 2 ranks share the
# GPU on the final code (multigpu, fault, debug-checks and Python; not run since session 72, so
# never with session 74's LL grids of two blocks an SM at 2 ranks, nor with this session's device
# API tests), stopped after 420 s. ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s75-c5-x1.sh
SUITE_STOP_S=420 SUITE12 "multigpu_2ranks_1gpu|multigpu_fault_2ranks_1gpu|multigpu_debug_checks_2ranks_1gpu|python_gpu_2ranks_1gpu"
true
