# Session 97, call 2 (one GPU, ~380 s; run with WORK_TARGETS="symmem-run"): after the fix of empty
# views of symmetric tensors in the one-sided calls (tensors._address), the one-sided random test
# at 2, 3, 4, 8 and 1 ranks, then the whole Python suite at 2 and 4 ranks, each run bounded.
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s97-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
PYK py_os97 60 'random_one_sided' 2 3 4 8 1
export SYMMEM_TIMEOUT_MS=30000
t=$(L 150) && PYN python_gpu_2ranks_1gpu 2 $t test_gpu.py
t=$(L 150) && PYN python_gpu_4ranks_1gpu 4 $t test_gpu.py
true
