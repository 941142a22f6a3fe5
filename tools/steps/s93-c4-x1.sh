# Session 93 (one GPU, ~230 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the random
# interleaving on teams of every other rank (Random.LongInterleavingOnTeamsOfEveryOtherRank) beside
# the world's, at 3, 4, 5 and 8 ranks on the GPU (2 and 1 skip it), and at 5 under SYMMEM_DEBUG_CHECKS=1.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s93-c4-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000
R() { FILTER='Random.*' T "$@"; grep -h "random interleaving" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | head -6; }
TLIMIT=60 R 2 2
TLIMIT=120 R 3 3
TLIMIT=120 R 4 4
TLIMIT=150 R 5 5
TLIMIT=200 R 8 8
TLIMIT=150 R 5 5 SYMMEM_DEBUG_CHECKS=1
true
