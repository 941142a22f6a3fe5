# Session 96, call 2 (one GPU, ~560 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the
# random device-API traffic at its final size (more groups a round at 3+ ranks, more rounds) at 2,
# 3 and 8 ranks; then the Python package: the new random calls test
# (test_random_calls_on_views_teams_and_graphs) at 2, 3, 4 and 8 ranks, then the whole Python
# suite at 2 and 4 ranks, each bounded by what is left of the call.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s96-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=60000
t=$(L 60) && TLIMIT=$t DT 2 2
t=$(L 60) && TLIMIT=$t DT 3 3
t=$(L 90) && TLIMIT=$t DT 8 8
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
for n in 2 3 4 8; do
  t=$(L 100) && PYTEST_ADDOPTS="-s -k random_calls -o faulthandler_timeout=60" PYN py_random_$n $n $t test_gpu.py
  grep -h "random python calls\|Error\|assert" "$OUT/py_random_$n.log" | head -8
done
t=$(L 120) && PYN python_gpu_2ranks_1gpu 2 $t test_gpu.py
t=$(L 150) && PYN python_gpu_4ranks_1gpu 4 $t test_gpu.py
true
