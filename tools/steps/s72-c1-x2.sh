# Steps for tools/call.sh on a 2-GPU machine (session 72, call 1): wait_for's paced phase looks at
# its bound and the abort flag every 64 us (8fafb80) beside main (a2c8409, .deps/ab/main):
# broadcast 1-256 MiB and all_reduce 64-256 MiB alternating twice (barrier_block's waits run in
# the paced phase there); then the tiers it touches and the 3-rank tiers session 71 added, never
# run: gpu_1rank (PatientWaitNoticesAnAbortSoon, capture_graph), multigpu_3ranks_2gpus,
# multigpu_own_gemm_3ranks_2gpus, and the fault tier at 2 GPUs. ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s72-c1-x2.sh
AAB bc main broadcast -b 1048576 -e 268435456 -f 4
AAB ar main all_reduce -b 67108864 -e 268435456 -f 2
RS "bc-*"
RS "ar-*" one_shot two_shot two_shot_push
SUITE_STOP_S=400 SUITE12 "gpu_1rank|multigpu_3ranks_2gpus|multigpu_own_gemm_3ranks_2gpus|multigpu_fault_2ranks_2gpus"
true
