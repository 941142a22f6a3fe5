# Steps for tools/call.sh on a 2-GPU machine (session 73, call 2): issue 11 at TP = 2 on today's
# code beside every peer, as session 35 last did for the whole table: symmem-bench overlap (every
# shape: the cuBLASLt GEMM alone, cuBLASLt + NCCL), back to back and then with a 1 ms near-idle
# spin before each replay (SYMMEM_BENCH_IDLE_US=1000, the duty cycle); PyTorch's anchor
# (torch_overlap.py); then `python -m symmem.bench --suite overlap` twice (symmem, torch.matmul
# alone, matmul + NCCL and PyTorch's fused ops interleaved round by round in one process).
# SMI_LOG=1 (clocks). ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s73-c2-x2.sh
export SMI_LOG=1
cmake -S . -B build -DSYMMEM_BUILD_PYTHON=ON >> "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem_python symmem_python_files >> "$OUT/build.log" 2>&1 || { echo "python build failed"; tail -20 "$OUT/build.log"; }
echo "== python built at $(el) s"
O overlap-b2b | grep -E "^==|ag\\+mm|mm\\+rs|GPU|^#"
O overlap-idle SYMMEM_BENCH_IDLE_US=1000 | grep -E "^==|ag\\+mm|mm\\+rs|GPU|^#"
timeout 150 torchrun --nproc-per-node=2 .deps/anchors/torch_overlap.py --out "$OUT/r/torch_overlap.json" > "$OUT/r/torch_overlap.log" 2>&1
echo "== torch_overlap rc $? at $(el) s"; grep -E "^\{" "$OUT/r/torch_overlap.log" | cut -c1-220 | head -20
for i in 1 2; do
  smi_start py-$i
  PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$C timeout 150 torchrun --nproc-per-node=2 -m symmem.bench --kind "$kind" \
    --suite overlap --out "$OUT/r/py-overlap-$i.json" > "$OUT/r/py-overlap-$i.log" 2>&1
  echo "== python overlap $i rc $? at $(el) s"; grep -E "^#|^ +(8B|70B)|Error" "$OUT/r/py-overlap-$i.log"
  smi_stop py-$i
done
true
