# Steps for tools/call.sh on a 2-GPU machine (session 76, call 3): device::put choosing its access
# width from the local symmetric address (the work tree) against 3cf6b4c (.deps/ab/base):
# symmem-bench p2p 8 B - 64 KiB alternating, twice; the order table at 8 B and 4 KiB once (its put
# rows against the 8-byte copies'); NVSHMEM's pair once; the SASS of p2p.cu (.deps/sass); then the
# device API, heap and collectives tests at 2 ranks on 2 GPUs and on one. ~5 minutes with the start.
#   tools/ab.sh prepare 3cf6b4c (as base); COMMIT=<sha> bash tools/call.sh tools/steps/s76-c3-x2.sh
for i in 1 2; do
  P2P "p2p-work-$i" -b 8 -e 64K
  BIN=base P2P "p2p-base-$i" -b 8 -e 64K
done
for b in 8 4096; do
  SYMMEM_BENCH_P2P_ORDER=1 timeout 120 build/bench/symmem-bench p2p -b $b -e $b --kind "$kind" --commit "$C" \
    --json "$OUT/r/p2p-order-$b.json" > "$OUT/p.log" 2>&1
  echo "== order $b B rc $? at $(el) s"; grep -E "^# order|^# latency variants" "$OUT/p.log"
done
S
NVSH -b 8 -e 64K
FILTER='DeviceApi*:DeviceAtomics*:Heap*:Stream*:Collectives*' T 2 1
FILTER='DeviceApi*:DeviceAtomics*:Heap*:Stream*' T 2 2
true
