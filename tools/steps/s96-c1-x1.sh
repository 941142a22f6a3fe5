# Session 96, call 1 (one GPU, ~560 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# random device-API traffic from user kernels (DeviceApi.RandomTraffic*: the world and reversed
# teams of every other rank) at 2, 1, 3, 4 and 8 ranks and under the debug checks; then the random
# MoE and overlap tests at 2 ranks (their int32 all-reduce between calls now from reference.hpp),
# and DeviceApi.* at 4 ranks.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s96-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=60000
t=$(L 60) && TLIMIT=$t DT 2 2
t=$(L 40) && TLIMIT=$t DT 1 1
t=$(L 60) && TLIMIT=$t DT 3 3
t=$(L 60) && TLIMIT=$t DT 4 4
t=$(L 90) && TLIMIT=$t DT 8 8
t=$(L 60) && TLIMIT=$t DT 2 2 SYMMEM_DEBUG_CHECKS=1
t=$(L 90) && TLIMIT=$t MT 2 2
t=$(L 90) && TLIMIT=$t OT 2 2
t=$(L 60) && FILTER='DeviceApi.*' TLIMIT=$t T 4 4
true
