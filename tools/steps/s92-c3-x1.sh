# Session 92 (one GPU, ~450 s; run with WORK_TARGETS=symmem-run): the Python suite with its new test
# (symmem.synchronize / check / clear_error: the last rank skips a group's all-reduce, the others
# get symmem.Timeout naming it) at 2, 4 and 8 ranks on the GPU, and the host tier.
#   COMMIT=<sha> WORK_TARGETS=symmem-run bash tools/call.sh tools/steps/s92-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export PYTHONPATH=$PWD/build/python SYMMEM_TIMEOUT_MS=100000
python3 tests/python/runner.py tests/python/test_host.py > "$OUT/host.log" 2>&1
echo "== python_host rc $? at $(el) s:" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/host.log" | tee -a "$OUT/summary.txt"
PYN python_gpu_2ranks_1gpu 2 120 test_gpu.py
PYN python_gpu_4ranks_1gpu 4 150 test_gpu.py
PYN python_gpu_8ranks_1gpu 8 $((570 - $(el))) test_gpu.py
true
