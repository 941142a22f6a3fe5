# Session 99, call 3 (one GPU, ~400 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run", timeout
# 460 s: what the budget left): under SYMMEM_DEBUG_CHECKS=1 at 3 ranks on one GPU, the Python test
# that failed in call 2 (its errors printed), the fault tests (a skipped call now named by the
# agreement; call 2 met an out_of_range there), then the rest of the Python suite, verbose (call 2
# ran out of time in it).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s99-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000 SYMMEM_DEBUG_CHECKS=1
PYTEST_ADDOPTS="-x -k integer_double_bool" PYN dbg_int_3 3 60 test_gpu.py
grep -a "^E \|Error\|differ\|refused" "$OUT/dbg_int_3.log" | sort | uniq -c | cut -c1-700 | head -30
TLIMIT=60 FILTER='Fault.*' T 3 3
PYTEST_ADDOPTS="-v -k 'not integer_double_bool' -o faulthandler_timeout=90" PYN dbg_rest_3 3 170 test_gpu.py
grep -a "PASSED\|FAILED\|ERROR\|Timeout\|^E " "$OUT/dbg_rest_3.log" | sed 's/^\[[^]]*\] //' | sort | uniq -c | cut -c1-400 | head -60
true
