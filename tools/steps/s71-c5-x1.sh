# Steps for tools/call.sh on a 1-GPU machine (session 71, with ~280 s of device time left): the
# multigpu tier of 2 ranks on one GPU (ranks share the GPU: no NCCL communicator, the fallbacks),
# not run since session 53, stopped after 100 s.
SUITE_STOP_S=100 SUITE12 "multigpu_2ranks_1gpu"
true
