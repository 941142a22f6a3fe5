# Steps for tools/call.sh on a 2-GPU machine (prepared in session 73, not yet run): session 73's
# leads at 2 GPUs. (1) vLLM's custom all-reduce beside symmem again, now that the zero-copy
# kernels' first barriers arrive relaxed and one_shot takes 1-4 MiB (needs
# .deps/vllm/csrc/custom_all_reduce.cuh: tools/peers.sh says how to write it), twice; (2) where
# the 2-rank table's crossovers now lie: all_reduce at 768 KiB (ll against one_shot), and
# reduce_scatter at 1-8 MiB (push against direct: direct won at 4 MiB, 11.0 us against 11.4), each
# twice. A reduce_scatter entry for direct needs a push fallback in choose_algo first (one_shot's
# is the model). (3) Session 74: symmem-bench p2p at 64 KiB - 1 MiB, twice: the put_signal
# ping-pong from a grid beside one block's (the main job had one block's 13.9 / 25.5 us at 512 KiB
# / 1 MiB against NCCL's 11.1 / 14.7). ~6 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s74-c1-x2.sh
PYBUILD
export TORCH_EXTENSIONS_DIR=$PWD/.deps/torch-ext
for i in 1 2; do
  PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$C timeout 240 torchrun --nproc-per-node=2 -m symmem.bench --kind "$kind" \
    --max-bytes $((16 << 20)) --vllm-peer bench/peers/vllm_custom_ar.py --algos one_shot \
    --out "$OUT/r/py-allreduce-vllm-$i.json" > "$OUT/py-ar-$i.log" 2>&1
  echo "== python all_reduce + vLLM $i rc $? at $(el) s"; grep -vE "^W11|^\s*$|Warning|warn|^\*+$|OMP_NUM" "$OUT/py-ar-$i.log" | tail -16
done
for i in 1 2; do
  A ar768k-$i all_reduce -b 786432 -e 786432
  A rs-$i reduce_scatter -b 1048576 -e 8388608 -f 2
done
RS "ar768k-*" ll one_shot push
RS "rs-*" push direct
for i in 1 2; do
  timeout 120 build/bench/symmem-bench p2p -b 64K -e 1M -f 2 --kind "$kind" --commit "$C" --json "$OUT/r/p2p-$i.json" > "$OUT/p2p.log" 2>&1
  echo "== p2p $i rc $? at $(el) s"; grep -vE "^\[rank [1-9]" "$OUT/p2p.log" | grep -E "^#|^ +[0-9]+ "
done
true
