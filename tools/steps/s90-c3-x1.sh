# Session 90 (one GPU, ~300 s; run with WORK_TARGETS=symmem-run): the Python suite at 4 ranks on one
# GPU after its rooted reduce's tolerance took the terms' magnitudes (call 2: "1 failed, 22
# passed": fp32 sums of 4 terms of ~100 rounded at their partial sums, not at the result), then at
# 2 ranks on it (ctest's python_gpu_2ranks_1gpu).
#   COMMIT=<sha> WORK_TARGETS=symmem-run bash tools/call.sh tools/steps/s90-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export PYTHONPATH=$PWD/build/python SYMMEM_TIMEOUT_MS=100000
pyn() {  # LABEL RANKS SECONDS ARGS...: launch.py RANKS --ranks-per-gpu RANKS ARGS, its summary lines
  local label=$1 n=$2 t=$3; shift 3
  timeout "$t" python3 tests/python/launch.py "$n" --ranks-per-gpu "$n" "$@" > "$OUT/$label.log" 2>&1
  echo "== $label rc $? at $(el) s:" | tee -a "$OUT/summary.txt"
  grep -E "[0-9]+ (passed|failed|skipped)|FAILED|Error|error:" "$OUT/$label.log" | sort | uniq -c | head -20 | tee -a "$OUT/summary.txt"
  { echo "==== $label"; cat "$OUT/$label.log"; } >> "$OUT/suite.log"  # (suite.log comes back in the archive)
}
pyn python_gpu_4ranks_1gpu 4 $((540 - $(el) - 70)) test_gpu.py
pyn python_gpu_2ranks_1gpu 2 $((560 - $(el))) test_gpu.py
true
