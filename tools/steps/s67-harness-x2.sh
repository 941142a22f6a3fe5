# Steps for tools/call.sh on a 2-GPU machine (written in session 66, never run): why 8B mm+rs M
# 8192 reads 1.106x torch.matmul in the Python harness (session 66 call 7) and 1.02-1.07x the
# floor in symmem-bench's: the data (torch.randn's normal operands against symmem-bench's uniform
# ones) or the harness, and is it the fused form's fixed cost? (1) symmem-bench overlap at 8B M
# 8192, three instances a column, uniform then normal operands (SYMMEM_OVERLAP_DATA=normal, new),
# then uniform with a 1 ms spin before each replay (SYMMEM_BENCH_IDLE_US, new: the duty cycle);
# (2) the Python harness on the same shape, the default forms and then the cuBLASLt ones
# (SYMMEM_OVERLAP_GEMM=cublas: the ring at TP = 2), twice each, then on uniform operands
# (--overlap-data uniform, new): data x harness. SMI_LOG=1 throughout (clocks).
# ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s67-harness-x2.sh
export SMI_LOG=1
cmake -S . -B build -DSYMMEM_BUILD_PYTHON=ON >> "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem_python symmem_python_files >> "$OUT/build.log" 2>&1 || { echo "python build failed"; tail -20 "$OUT/build.log"; }
echo "== python built at $(el) s"
for data in random normal; do
  O cxx-$data SYMMEM_OVERLAP_DATA=$data SYMMEM_OVERLAP_TWINS=3 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|clocks|GPU"
  TW cxx-$data
done
# (the duty cycle: a 1 ms near-idle spin before each timed replay, SYMMEM_BENCH_IDLE_US, new)
O cxx-idle SYMMEM_BENCH_IDLE_US=1000 SYMMEM_OVERLAP_TWINS=3 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|clocks|GPU"
TW cxx-idle
py() {  # py LABEL [VAR=value...]: the Python harness at 8B, M 8192 / 16384
  local label=$1; shift
  smi_start "$label"
  env "$@" PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$C timeout 120 torchrun --nproc-per-node=2 -m symmem.bench --kind "$kind" \
    --suite overlap --overlap-models 8B --overlap-ms 8192,16384 --overlap-data "${PYDATA:-normal}" --out "$OUT/r/$label.json" > "$OUT/py.log" 2>&1
  echo "== $label ($*) rc $? at $(el) s"; grep -E "^ +8B|Error" "$OUT/py.log"
  smi_stop "$label"
}
for i in 1 2; do
  py py-own-$i
  py py-cublas-$i SYMMEM_OVERLAP_GEMM=cublas
done
# (and the Python harness on symmem-bench's uniform operands: with (1), data x harness)
PYDATA=uniform py py-own-uniform
true
