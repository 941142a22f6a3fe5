# Session 90 (one GPU, ~300 s; run with WORK_TARGETS=symmem-run): the Python suite at 8 ranks on one
# GPU (torch's references over gloo), the world size of an 8-GPU server, where no 4-GPU kind is lent.
#   COMMIT=<sha> WORK_TARGETS=symmem-run bash tools/call.sh tools/steps/s90-c5-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export PYTHONPATH=$PWD/build/python SYMMEM_TIMEOUT_MS=100000
timeout $((345 - $(el))) python3 tests/python/launch.py 8 --ranks-per-gpu 8 test_gpu.py > "$OUT/py8.log" 2>&1
echo "== python_gpu_8ranks_1gpu rc $? at $(el) s:" | tee -a "$OUT/summary.txt"
grep -E "[0-9]+ (passed|failed|skipped)|^E .*(differ|Error)" "$OUT/py8.log" | sort | uniq -c | head -20 | tee -a "$OUT/summary.txt"
cp "$OUT/py8.log" "$OUT/suite.log"  # (suite.log comes back in the archive)
true
