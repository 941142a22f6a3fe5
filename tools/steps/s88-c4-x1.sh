# Session 88, call 4 (one GPU, ~480 s): every host entry point makes its Context's GPU current for
# the call and gives the thread its own back (src/runtime/call_scope.hpp; the new
# Threads.CallsFromAThreadWhoseDeviceIsAnotherGpu, which on one GPU checks the results and the
# device given back only; its real case needs a GPU a rank). The tiers every entry point runs in:
# gpu_1rank, 2 ranks on the GPU, the debug checks, the Python tier, an example.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s88-c4-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=330 SUITE12 "${SUITE_REGEX:-gpu_1rank|multigpu_2ranks_1gpu|multigpu_debug_checks_2ranks_1gpu|python_gpu_2ranks_1gpu|^example_moe$}"
grep -E "Threads\.|FAILED" "$OUT/suite.log" | sort | uniq -c | head -8
true
