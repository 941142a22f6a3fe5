# Steps for tools/call.sh on a 2-GPU machine (prepared in session 70, not run): broadcast direct at
# 256 MiB (918.6 us against push's 739.8 in session 70's main job) under barrier_block's patient
# wait. Session 70 found each size needing longer pauses (500 ns fixed 32 MiB, 1 us 64, 2-4 us 128:
# at most ~200 polls a waiter per transfer). Trees: the work tree (8 us eager, 1/64, up to 4 us)
# beside cap16 (up to 16 us) and uncapped (up to 1 ms: ~64 ln(T / 8 us) polls a wait of T),
# alternating, twice: broadcast 1-256 MiB. Then the 1- and 2-GPU suite (session 70's new test
# DeviceApi.BarriersWaitedOnLongStillOrderTheData runs there first). ~8 minutes with the start.
#   rm -rf .deps/ab/*
#   tools/ab.sh define cap16 HEAD SYMMEM_BARRIER_BACKOFF_NS=16000
#   tools/ab.sh define uncapped HEAD SYMMEM_BARRIER_BACKOFF_NS=1000000
#   COMMIT=<sha> bash tools/call.sh tools/steps/s71-bc-x2.sh
AAB bc "cap16 uncapped" broadcast -b 1048576 -e 268435456 -f 2
RS "bc-*"
SUITE12
true
