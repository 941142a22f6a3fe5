# Session 97, call 1 (one GPU, ~560 s; run with WORK_TARGETS="symmem-run"): the three new Python
# random tests (the one-sided calls; MoE objects, shapes and call forms; the overlapped GEMMs on
# teams, remakes and kept graphs) at 2, 3, 4, 8 and 1 ranks on one GPU, each run bounded.
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s97-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
for n in 2 3 4 8 1; do
  t=$(L 110) && PYTEST_ADDOPTS="-s -k 'random_one_sided or random_moe or random_overlapped' -o faulthandler_timeout=100" PYN py_rand97_$n $n $t test_gpu.py
  grep -h "random one-sided\|random python moe\|random python overlap\|Error\|assert\|case [0-9]" "$OUT/py_rand97_$n.log" | cut -c1-1500 | head -12
done
true
