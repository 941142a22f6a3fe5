# Steps for tools/call.sh on a 1-GPU machine (session 76, call 6, the final code): the tiers where 2
# ranks share the GPU that call 5 did not run (multigpu, fault, Python), stopped after 170 s.
# ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s76-c6-x1.sh
SUITE_STOP_S=170 SUITE12 "multigpu_2ranks_1gpu|multigpu_fault_2ranks_1gpu|python_gpu_2ranks_1gpu"
true
