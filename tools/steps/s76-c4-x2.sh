# Steps for tools/call.sh on a 2-GPU machine (session 76, call 4): copy_bytes' small aligned path
# (the work tree) against fbc5ff4 (.deps/ab/base): symmem-bench p2p 8 B - 64 KiB alternating,
# twice; the order table at 8 B once; all_gather and all_to_all 1 KiB - 16 MiB alternating, twice
# (their kernels copy with copy_bytes); the SASS of p2p.cu; the device API and collectives tests
# at 2 ranks on 2 GPUs and on one. ~5 minutes with the start.
#   tools/ab.sh prepare fbc5ff4 (as base); COMMIT=<sha> bash tools/call.sh tools/steps/s76-c4-x2.sh
for i in 1 2; do
  P2P "p2p-work-$i" -b 8 -e 64K
  BIN=base P2P "p2p-base-$i" -b 8 -e 64K
done
SYMMEM_BENCH_P2P_ORDER=1 timeout 120 build/bench/symmem-bench p2p -b 8 -e 8 --kind "$kind" --commit "$C" --json "$OUT/r/p2p-order-8.json" > "$OUT/p.log" 2>&1
echo "== order 8 B rc $? at $(el) s"; grep -E "^# order|^# latency variants" "$OUT/p.log"
AAB ag base all_gather -b 1K -e 16M -f 4
AAB a2a base all_to_all -b 1K -e 16M -f 4
S
FILTER='DeviceApi*:Collectives*:Stream*' T 2 1
FILTER='DeviceApi*:Collectives*:Stream*' T 2 2
true
