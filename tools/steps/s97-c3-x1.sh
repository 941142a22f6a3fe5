# Session 97, call 3 (one GPU, ~420 s; run with WORK_TARGETS="symmem-run"): the session's final
# Python code (empty views in the one-sided calls; the overlapped GEMMs of no rows return empty
# results, K or Nc of 0 refused): the three new random tests at 2, 3 and 8 ranks, then the whole
# Python suite at 2 and 4 ranks, each run bounded.
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s97-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
for n in 2 3 8; do
  t=$(L 80) && PYTEST_ADDOPTS="-s -k 'random_one_sided or random_moe or random_overlapped' -o faulthandler_timeout=75" PYN py_rand97_$n $n $t test_gpu.py
  grep -ah "random one-sided\|random python moe\|random python overlap\|Error\|assert" "$OUT/py_rand97_$n.log" | cut -c1-1500 | head -8
done
export SYMMEM_TIMEOUT_MS=30000
t=$(L 120) && PYN python_gpu_2ranks_1gpu 2 $t test_gpu.py
t=$(L 120) && PYN python_gpu_4ranks_1gpu 4 $t test_gpu.py
true
