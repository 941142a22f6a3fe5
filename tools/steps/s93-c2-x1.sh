# Session 93 (one GPU, ~260 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the random
# interleaving with all_to_all_v (random counts, zeros, splits past ll's 256 KiB, exact or spare
# out_count, recv_counts or none) beside every other collective at 1, 2, 3, 4 and 8 ranks on the
# GPU, and at 2 and 4 ranks under SYMMEM_DEBUG_CHECKS=1; each run's counts of what ran printed.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s93-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000
R() { FILTER='Random.*' T "$@"; grep -h "random interleaving" "$OUT/t.log" | sort | uniq -c | head -3; }
TLIMIT=90 R 1 1
TLIMIT=90 R 2 2
TLIMIT=120 R 3 3
TLIMIT=120 R 4 4
TLIMIT=180 R 8 8
TLIMIT=120 R 2 2 SYMMEM_DEBUG_CHECKS=1
TLIMIT=150 R 4 4 SYMMEM_DEBUG_CHECKS=1
true
