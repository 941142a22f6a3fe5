# Session 93 (one GPU, ~230 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the random
# interleaving on teams of every other rank (Random.LongInterleavingOnTeamsOfEveryOtherRank) beside
# the world's, at 3, 4, 5 and 8 ranks on the GPU (2 and 1 skip it), and at 5 under SYMMEM_DEBUG_CHECKS=1.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s93-c4-x1.sh (carry [".deps/googletest", ".deps/anchors"])
# (It ran with a helper of its own, the same as tools/call.sh's RT since.)
export SYMMEM_TIMEOUT_MS=100000
TLIMIT=60 RT 2 2
TLIMIT=120 RT 3 3
TLIMIT=120 RT 4 4
TLIMIT=150 RT 5 5
TLIMIT=200 RT 8 8
TLIMIT=150 RT 5 5 SYMMEM_DEBUG_CHECKS=1
true
