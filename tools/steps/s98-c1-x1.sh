# Session 98, call 1 (one GPU, ~450 s; run with WORK_TARGETS="symmem-run"): session 97's last commit
# (the MoE tests' row fingerprints in one helper, row_fingerprints) had not run on a GPU: the whole
# Python suite at 2 and 4 ranks on one GPU, then every random Python test at 8, each run bounded.
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s98-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=30000
t=$(L 110) && PYN python_gpu_2ranks_1gpu 2 $t test_gpu.py
t=$(L 140) && PYN python_gpu_4ranks_1gpu 4 $t test_gpu.py
export SYMMEM_TIMEOUT_MS=10000
PYK py_rand98 $((545 - $(el))) 'random' 8
true
