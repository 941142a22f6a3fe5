# Session 97, call 3 (one GPU, ~420 s; run with WORK_TARGETS="symmem-run"): the session's final
# Python code (empty views in the one-sided calls; the overlapped GEMMs of no rows return empty
# results, K or Nc of 0 refused; the random tests through parity_team, drawn_team and
# run_random_cases): every random Python test at 2, 3 and 8 ranks, then the whole Python suite at
# 4 ranks, each run bounded. (The steps' helper PYK is in tools/call.sh.)
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s97-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
PYK py_rand97 80 'random' 2 3 8
export SYMMEM_TIMEOUT_MS=30000
t=$(L 120) && PYN python_gpu_4ranks_1gpu 4 $t test_gpu.py
true
