# Session 92 (one GPU, ~450 s; run with WORK_TARGETS=symmem-run): the Python suite with its new test
# (symmem.synchronize / check / clear_error: the last rank skips a group's all-reduce, the others
# get symmem.Timeout naming it) at 2, 4 and 8 ranks on the GPU, and the host tier.
#   COMMIT=<sha> WORK_TARGETS=symmem-run bash tools/call.sh tools/steps/s92-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export PYTHONPATH=$PWD/build/python SYMMEM_TIMEOUT_MS=100000
pyn() {  # LABEL RANKS SECONDS ARGS...: launch.py RANKS --ranks-per-gpu RANKS ARGS, its summary lines
  local label=$1 n=$2 t=$3; shift 3
  timeout "$t" python3 tests/python/launch.py "$n" --ranks-per-gpu "$n" "$@" > "$OUT/$label.log" 2>&1
  echo "== $label rc $? at $(el) s:" | tee -a "$OUT/summary.txt"
  grep -E "[0-9]+ (passed|failed|skipped)|FAILED|Error|error:" "$OUT/$label.log" | sort | uniq -c | head -20 | tee -a "$OUT/summary.txt"
  { echo "==== $label"; cat "$OUT/$label.log"; } >> "$OUT/suite.log"  # (suite.log comes back in the archive)
}
python3 tests/python/runner.py tests/python/test_host.py > "$OUT/host.log" 2>&1
echo "== python_host rc $? at $(el) s:" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/host.log" | tee -a "$OUT/summary.txt"
pyn python_gpu_2ranks_1gpu 2 120 test_gpu.py
pyn python_gpu_4ranks_1gpu 4 150 test_gpu.py
pyn python_gpu_8ranks_1gpu 8 $((570 - $(el))) test_gpu.py
true
