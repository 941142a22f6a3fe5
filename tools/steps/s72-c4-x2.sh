# Steps for tools/call.sh on a 2-GPU machine (session 72, call 4, ~540 s of device time left): the
# final code's 4-rank tier on 2 GPUs (last run in session 71, before capture_graph and the new
# DeviceApi test) and the own GEMM's 3-rank tier (call 1 ran it with the paced checks since
# reverted), stopped after 240 s. ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s72-c4-x2.sh
SUITE_STOP_S=240 SUITE12 "multigpu_4ranks_2gpus|multigpu_own_gemm_3ranks_2gpus"
grep -h "patient wait after the abort" "$OUT/suite.log" build/Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq | head -8
true
