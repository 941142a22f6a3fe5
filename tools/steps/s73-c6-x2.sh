# Steps for tools/call.sh on a 2-GPU machine (session 73, call 6, the last of the session's device
# time): the final library code (relaxed first barriers, one_shot in the 2-rank table at 1-4 MiB)
# through the GPU tests: the multigpu suite at 2 ranks on 2 GPUs (as ctest's
# multigpu_2ranks_2gpus, -Fault.*), the fault tier there, the collectives, device API and random
# interleavings at 2 ranks on one GPU, the random interleavings at 4 and 3 ranks on 2 GPUs; then
# the README's main job. (Call 5's T 2 1 ran Fault.* inside the suite, where a test's rank 1 exits on
# purpose and every later test failed for it: the tiers keep Fault.* apart for that reason.)
# ~6 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s73-c6-x2.sh
TLIMIT=200 FILTER='-Fault.*' T 2 1
FILTER='Fault.*' T 2 1
FILTER='Collectives*:DeviceApi*:Random*' T 2 2
FILTER='Random*' T 4 2
FILTER='Random*' T 3 2
MAINJOB 380
true
