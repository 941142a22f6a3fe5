# Session 96, call 5 (one GPU, ~250 s; run with WORK_TARGETS="symmem-run"): after the final review
# the Python random test checks through the suite's reduce_ref and close (now per team size, every
# integer type exact, float64, flattened shapes): that test at 3 and 2 ranks, then the whole Python
# suite at 2 ranks, each bounded by what is left of the call.
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s96-c5-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
for n in 3 2; do
  t=$(L 60) && PYTEST_ADDOPTS="-s -k random_calls -o faulthandler_timeout=50" PYN py_random_$n $n $t test_gpu.py
  grep -h "random python calls\|Error\|assert" "$OUT/py_random_$n.log" | head -8
done
t=$(L 90) && PYN python_gpu_2ranks_1gpu 2 $t test_gpu.py
true
