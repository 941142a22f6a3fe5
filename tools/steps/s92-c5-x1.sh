# Session 92 (one GPU, ~300 s; run with WORK_TARGETS=symmem-run): the Python suite with Group.failure
# in the new test (the group's reason after the Timeout and after abort), at 2 and 4 ranks on the GPU.
#   COMMIT=<sha> WORK_TARGETS=symmem-run bash tools/call.sh tools/steps/s92-c5-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=100000
PYN python_gpu_2ranks_1gpu 2 120 test_gpu.py
PYN python_gpu_4ranks_1gpu 4 $((440 - $(el))) test_gpu.py
true
