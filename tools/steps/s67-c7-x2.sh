# Steps for tools/call.sh on a 2-GPU machine (session 67, call 7): the final code's benchmark
# headers (the duty cycle named), and after a near-idle millisecond the default forms against the
# cuBLASLt ones (SYMMEM_OVERLAP_ALT=cublas) at 8B, both ways round, twins 2 (README's advice for
# bursty GEMMs); then the Python harness at 8B M 8192 (its method string). ~3 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s67-c7-x2.sh
for first in 0 1; do
  O cub-idle-f$first SYMMEM_BENCH_IDLE_US=1000 SYMMEM_OVERLAP_ALT=cublas SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_TWINS=2 \
    SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|^# symmem|ag\\+mm|mm\\+rs"
  TW cub-idle-f$first
done
python3 -c "import json; print(json.load(open('$OUT/r/cub-idle-f0.json'))['timing'])"
cmake -S . -B build -DSYMMEM_BUILD_PYTHON=ON >> "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem_python symmem_python_files >> "$OUT/build.log" 2>&1 || { echo "python build failed"; tail -20 "$OUT/build.log"; }
PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$C timeout 90 torchrun --nproc-per-node=2 -m symmem.bench --kind "$kind" \
  --suite overlap --overlap-models 8B --overlap-ms 8192 --out "$OUT/r/py-c7.json" > "$OUT/py.log" 2>&1
echo "== py rc $? at $(el) s"; grep -E "^ +8B|Error|model" "$OUT/py.log"
python3 -c "import json; print(json.load(open('$OUT/r/py-c7.json'))['method'])"
true
