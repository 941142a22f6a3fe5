# Session 93 (one GPU, ~420 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the session's
# final test code: the random interleaving at 200 batches (120 above 4 ranks) at 1, 2, 3 and 8 ranks
# on the GPU and at 4 under SYMMEM_DEBUG_CHECKS=1; the Python suite (the views test with the
# rooted collectives) at 8 ranks on it, then at 2.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s93-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
# (It ran with a helper of its own, the same as tools/call.sh's RT since.)
export SYMMEM_TIMEOUT_MS=100000
TLIMIT=90 RT 1 1
TLIMIT=90 RT 2 2
TLIMIT=120 RT 3 3
TLIMIT=180 RT 8 8
TLIMIT=150 RT 4 4 SYMMEM_DEBUG_CHECKS=1
PYBUILD
PYN python_gpu_8ranks_1gpu 8 180 test_gpu.py
PYN python_gpu_2ranks_1gpu 2 $((540 - $(el))) test_gpu.py
true
