# Session 90 (one GPU, ~300 s; run with WORK_TARGETS=symmem-run): the Python suite at 4 ranks on one
# GPU after its rooted reduce's tolerance took the terms' magnitudes (call 2: "1 failed, 22
# passed": fp32 sums of 4 terms of ~100 rounded at their partial sums, not at the result), then at
# 2 ranks on it (ctest's python_gpu_2ranks_1gpu).
#   COMMIT=<sha> WORK_TARGETS=symmem-run bash tools/call.sh tools/steps/s90-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export PYTHONPATH=$PWD/build/python SYMMEM_TIMEOUT_MS=100000
PYN python_gpu_4ranks_1gpu 4 $((540 - $(el) - 70)) test_gpu.py
PYN python_gpu_2ranks_1gpu 2 $((560 - $(el))) test_gpu.py
true
