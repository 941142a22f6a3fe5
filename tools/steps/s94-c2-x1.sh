# Session 94 (one GPU, ~300 s; run with WORK_TARGETS="symmem-run"): call 1's Python suite at 2
# ranks stopped after 21 tests (killed at 100 s), in the new int64 MoE test: the suite again,
# verbose, each test's Python stacks dumped after 30 s, waits bounded at 15 s (so a stuck wait
# fails its test with the report instead of stopping the suite).
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s94-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=15000
PYTEST_ADDOPTS="-v -o faulthandler_timeout=30" PYN python_gpu_2ranks_1gpu 2 $((500 - $(el))) test_gpu.py
grep -E "PASSED|FAILED|Timeout|Error|error|File \"|Thread" "$OUT/python_gpu_2ranks_1gpu.log" | head -90
true
