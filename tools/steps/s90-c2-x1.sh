# Session 90 (one GPU, ~400 s; run with WORK_TARGETS=symmem-run: no C++ tests or bench needed): the
# Python package's multi-rank paths at 4 ranks on one GPU (the suite ctest runs as
# python_gpu_2ranks_1gpu, torch's references over gloo; python_gpu_4gpus last ran in session 45),
# then the MoE layer example (fp8 dispatch) at 4 ranks on it.
#   COMMIT=<sha> WORK_TARGETS=symmem-run bash tools/call.sh tools/steps/s90-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export PYTHONPATH=$PWD/build/python SYMMEM_TIMEOUT_MS=100000
py4() {  # LABEL SECONDS ARGS...: launch.py 4 --ranks-per-gpu 4 ARGS, its summary lines
  local label=$1 t=$2; shift 2
  timeout "$t" python3 tests/python/launch.py 4 --ranks-per-gpu 4 "$@" > "$OUT/$label.log" 2>&1
  echo "== $label rc $? at $(el) s:" | tee -a "$OUT/summary.txt"
  grep -E "[0-9]+ (passed|failed|skipped)|FAILED|Error|error:" "$OUT/$label.log" | sort | uniq -c | head -20 | tee -a "$OUT/summary.txt"
  { echo "==== $label"; cat "$OUT/$label.log"; } >> "$OUT/suite.log"  # (suite.log comes back in the archive)
}
py4 python_gpu_4ranks_1gpu $((520 - $(el) - 60)) test_gpu.py
py4 moe_layer_4ranks_1gpu $((560 - $(el))) ../../examples/python/moe_layer.py --fp8
tail -5 "$OUT/moe_layer_4ranks_1gpu.log"
true
