# Session 96, call 4 (one GPU, ~560 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# three tests on teams of every other rank (now through gpu_env.hpp's on_parity_teams) at 3 ranks
# (teams of 2 and 1), then the GPU binary's tiers as ctest's multigpu_4ranks_1gpu and gpu_1rank
# run them ("-Fault.*") on the session's final tests, each bounded by what is left of the call.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s96-c4-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000
t=$(L 120) && FILTER='Random.LongInterleavingOnTeamsOfEveryOtherRank:Stream.RandomPutsGetsAndSignalsOnReversedTeamsOfEveryOtherRank:DeviceApi.RandomTrafficFromUserKernelsOnReversedTeamsOfEveryOtherRank' TLIMIT=$t T 3 3
grep -h "random interleaving\|random stream\|random device traffic" "$OUT/t.log" | sed 's/^\[rank [0-9]*\] //' | sort | uniq -c | head -8
t=$(L 270) && FILTER='-Fault.*' TLIMIT=$t T 4 4
t=$(L 90) && FILTER='-Fault.*' TLIMIT=$t T 1 1
true
