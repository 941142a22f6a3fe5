# Steps for tools/call.sh on a 2-GPU machine (session 74, call 2): the push broadcast at 2 ranks
# without the barrier between the root's writes and the last one (work) against 8418aef
# (.deps/ab/8418aef: both barriers), symmem-bench broadcast 1-64 MiB alternating, twice; the
# collectives' tests at 2 ranks on 2 GPUs and 2 on one; symmem-bench p2p 16 KiB - 1 MiB (the grid
# ping-pong from 32 KiB). ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s74-c2-x2.sh
AAB bc 8418aef broadcast -b 1M -e 64M -f 4
RS "bc-*" push direct
FILTER='Collectives*' T 2 1
FILTER='Collectives*' T 2 2
timeout 120 build/bench/symmem-bench p2p -b 16K -e 1M -f 2 --kind "$kind" --commit "$C" --json "$OUT/r/p2p.json" > "$OUT/p2p.log" 2>&1
echo "== p2p rc $? at $(el) s"; grep -vE "^\[rank [1-9]" "$OUT/p2p.log" | grep -E "^#|^ +[0-9]+ "
true
