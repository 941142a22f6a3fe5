# Session 94 (one GPU, ~300 s; run with WORK_TARGETS="symmem-run"): call 1's Python suite at 2
# ranks stopped after 21 tests (killed at 100 s), in the new int64 MoE test. The cause, found by
# reading: its int64 topk_idx was a strided slice (.to() of an int64 tensor returns it as it is),
# which dispatch refuses on the rank with tokens, while the rank without tokens (a contiguous empty
# tensor) dispatched and waited for it. Fixed in the test; the suite again, verbose, each test's
# Python stacks dumped after 30 s, waits bounded at 15 s; then at 4 ranks.
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s94-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=15000
PYTEST_ADDOPTS="-v -o faulthandler_timeout=30" PYN python_gpu_2ranks_1gpu 2 200 test_gpu.py
grep -E "FAILED|Timeout|Error|error|File \"|Thread" "$OUT/python_gpu_2ranks_1gpu.log" | head -40
PYN python_gpu_4ranks_1gpu 4 $((540 - $(el))) test_gpu.py
true
