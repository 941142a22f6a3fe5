# Steps for tools/call.sh on a 1-GPU machine (session 75, call 7): Overlap.TransposedGemmDynamic-
# ScheduleOnOneGpu after the tests' poison() waits for its memset (call 6: 5 of 25 failed at 2 ranks
# on the GPU, the poison landing after the GEMM's first tiles), as call 6 measured it.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s75-c7-x1.sh
eval "$(sed -n '/^rep() {/,/^}/p' tools/steps/s75-c6-x1.sh)"  # (call 6's rep)
rep two 2 25
rep two-debug 2 25 SYMMEM_DEBUG_CHECKS=1
true
