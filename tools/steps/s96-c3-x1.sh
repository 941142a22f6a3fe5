# Session 96, call 3 (one GPU, ~480 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# Python random calls test at its final size (96 cases, 48 above 4 ranks; up to 2^21 / world
# elements) at 2, 3 and 8 ranks, the whole Python suite at 2 ranks, then the GPU binary's tier as
# ctest's multigpu_2ranks_1gpu runs it ("-Fault.*") on the session's final tests.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s96-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
for n in 2 3 8; do
  t=$(L 120) && PYTEST_ADDOPTS="-s -k random_calls -o faulthandler_timeout=90" PYN py_random_$n $n $t test_gpu.py
  grep -h "random python calls\|Error\|assert" "$OUT/py_random_$n.log" | head -8
done
t=$(L 120) && PYN python_gpu_2ranks_1gpu 2 $t test_gpu.py
export SYMMEM_TIMEOUT_MS=100000
t=$(L 200) && FILTER='-Fault.*' TLIMIT=$t T 2 2
true
