# Steps for tools/call.sh on a 2-GPU machine (session 74, call 4): the session's final library
# (2-rank table: ll to its capacity; LL grids of two blocks an SM but for broadcast; push broadcast
# with one barrier less; reduce-scatter direct from 2 MiB) beside vLLM's custom all-reduce once
# (python -m symmem.bench --vllm-peer; needs .deps/vllm/csrc/custom_all_reduce.cuh), then the
# README's main job. ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s74-c4-x2.sh
PYBUILD
export TORCH_EXTENSIONS_DIR=$PWD/.deps/torch-ext
PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$C timeout 200 torchrun --nproc-per-node=2 -m symmem.bench --kind "$kind" \
  --max-bytes $((16 << 20)) --vllm-peer bench/peers/vllm_custom_ar.py \
  --out "$OUT/r/py-allreduce-vllm.json" > "$OUT/py-ar.log" 2>&1
echo "== python all_reduce + vLLM rc $? at $(el) s"; grep -vE "^W11|^\s*$|Warning|warn|^\*+$|OMP_NUM" "$OUT/py-ar.log" | tail -14
MAINJOB 500
true
