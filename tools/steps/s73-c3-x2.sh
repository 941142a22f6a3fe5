# Steps for tools/call.sh on a 2-GPU machine (session 73, call 3): vLLM's custom all-reduce as a
# peer, first run. `python -m symmem.bench` (all_reduce suite, 1 KiB - 64 MiB) with --vllm-peer:
# symmem, NCCL, PyTorch's one-shot and two-shot and vLLM's CustomAllreduce (bench/peers/
# vllm_custom_ar.{py,cu}, built here against .deps/vllm/csrc by PyTorch's extension builder, ~1
# minute) in one process, twice; then the Python GPU tier (the package changed: bench.py).
# ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s73-c3-x2.sh
cmake -S . -B build -DSYMMEM_BUILD_PYTHON=ON >> "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem_python symmem_python_files >> "$OUT/build.log" 2>&1 || { echo "python build failed"; tail -20 "$OUT/build.log"; }
echo "== python built at $(el) s"
export TORCH_EXTENSIONS_DIR=$PWD/.deps/torch-ext TORCH_CUDA_ARCH_LIST=9.0
for i in 1 2; do
  PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$C timeout 240 torchrun --nproc-per-node=2 -m symmem.bench --kind "$kind" \
    --max-bytes $((64 << 20)) --vllm-peer bench/peers/vllm_custom_ar.py --out "$OUT/r/py-allreduce-vllm-$i.json" > "$OUT/py-ar-$i.log" 2>&1
  echo "== python all_reduce + vLLM $i rc $? at $(el) s"; grep -vE "^W11|^\s*$|Warning|warn|^\*+$|OMP_NUM" "$OUT/py-ar-$i.log" | tail -25
done
SUITE_STOP_S=200 SUITE12 "python_gpu_2gpus|python_host"
true
