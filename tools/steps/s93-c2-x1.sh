# Session 93 (one GPU, ~260 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the random
# interleaving with all_to_all_v (random counts, zeros, splits past ll's 256 KiB, exact or spare
# out_count, recv_counts or none) beside every other collective at 1, 2, 3, 4 and 8 ranks on the
# GPU, and at 2 and 4 ranks under SYMMEM_DEBUG_CHECKS=1; each run's counts of what ran printed.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s93-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
# (It ran with a helper of its own, the same as tools/call.sh's RT since.)
export SYMMEM_TIMEOUT_MS=100000
TLIMIT=90 RT 1 1
TLIMIT=90 RT 2 2
TLIMIT=120 RT 3 3
TLIMIT=120 RT 4 4
TLIMIT=180 RT 8 8
TLIMIT=120 RT 2 2 SYMMEM_DEBUG_CHECKS=1
TLIMIT=150 RT 4 4 SYMMEM_DEBUG_CHECKS=1
true
