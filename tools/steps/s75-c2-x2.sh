# Steps for tools/call.sh on a 2-GPU machine (session 75, call 2): what each side of a signal costs
# (symmem-bench p2p's SYMMEM_BENCH_P2P_ORDER=1 table: signal forms by wait forms, the signal alone
# and after a warp's put) at 8 B and 4 KiB, three runs each. ~2.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s75-c2-x2.sh
for i in 1 2 3; do
  for n in 8 4K; do
    SYMMEM_BENCH_P2P_ORDER=1 timeout 60 build/bench/symmem-bench p2p -b $n -e $n --kind "$kind" --commit "$C" \
      --json "$OUT/r/order-$n-$i.json" > "$OUT/p2p.log" 2>&1
    echo "== order $n run $i rc $? at $(el) s"; grep -E "^# (order|latency)" "$OUT/p2p.log"
  done
done
true
