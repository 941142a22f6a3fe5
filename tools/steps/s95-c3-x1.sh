# Session 95, call 3 (one GPU, ~300 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# random stream rounds (Stream.RandomPutsGetsAndSignalsBetweenEveryPair: put, put_signal, get and
# bare signals between every pair, both engines, 0 B - 1.5 MiB at any offset, adds and sets, eager
# and in graphs) at 1, 2, 3, 4 and 8 ranks on the GPU, at 2 under SYMMEM_DEBUG_CHECKS=1, then every
# Stream test at 2 and 4 ranks.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s95-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000
t=$(L 60) && TLIMIT=$t ST 2 2
t=$(L 40) && TLIMIT=$t ST 1 1
t=$(L 60) && TLIMIT=$t ST 4 4
t=$(L 90) && TLIMIT=$t ST 8 8
t=$(L 60) && TLIMIT=$t ST 3 3
t=$(L 60) && TLIMIT=$t ST 2 2 SYMMEM_DEBUG_CHECKS=1
t=$(L 60) && FILTER='Stream.*' TLIMIT=$t T 2 2
t=$(L 60) && FILTER='Stream.*' TLIMIT=$t T 4 4
true
