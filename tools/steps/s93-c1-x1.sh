# Session 93 (one GPU, ~420 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the random
# interleaving now with reduce, gather and scatter, every reduce type, int64, and start offsets (a
# view into a symmetric buffer) at 1, 2, 3 and 8 ranks on the GPU; then the Python suite (its new
# test_views_at_an_offset_into_symmetric_tensors) at 8 ranks on it.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s93-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000
FILTER='Random.*' TLIMIT=90 T 1 1
FILTER='Random.*' TLIMIT=90 T 2 2
FILTER='Random.*' TLIMIT=120 T 3 3
FILTER='Random.*' TLIMIT=180 T 8 8
PYBUILD
PYN python_gpu_8ranks_1gpu 8 $((540 - $(el))) test_gpu.py
true
