# Steps for tools/call.sh on a 1-GPU machine (session 72, call 2: only nvidia-h200 lent after call
# 1): the final library code (wait_for as on main, capture_graph in the GPU tests, the test
# PatientWaitGivesUpOnAnAbort) in every tier one GPU runs: gpu_1rank, 2 ranks on the GPU (the
# multigpu, fault, own-GEMM, debug-checks and Python tiers), stopped after 440 s; then the main
# job, which must say it needs 2 GPUs and exit 3. ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s72-c2-x1.sh
SUITE_STOP_S=440 SUITE12 "gpu_1rank|multigpu_2ranks_1gpu|multigpu_fault_2ranks_1gpu|multigpu_own_gemm_2ranks_1gpu|multigpu_debug_checks_2ranks_1gpu|python_gpu_2ranks_1gpu"
grep -h "patient wait after the abort" "$OUT/suite.log" build/Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq | head -8
MAINJOB
true
