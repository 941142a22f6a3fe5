# Session 98, call 3 (one GPU, ~300 s; s98-c2-x1.sh cut to what the session's last minutes hold;
# run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the AllToAllV tests at 2 ranks on one GPU,
# with the debug checks and DebugChecks.*, then the two new random Python tests at 3 ranks.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s98-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
t=$(L 40) && TLIMIT=$t FILTER='*AllToAllV*' T 2 2
t=$(L 40) && TLIMIT=$t FILTER='*AllToAllV*:DebugChecks.*' T 2 2 SYMMEM_DEBUG_CHECKS=1
PYK py_new98 $((300 - $(el))) 'random_all_to_all_v or random_groups' 3
true
