# Steps for tools/call.sh on a 2-GPU machine (session 74, call 6): symmem-bench p2p 8 B - 2 MiB
# with the ping-pongs' data checked (dst poisoned before them, the peer's pattern counted after:
# "#wrong" must stay 0). ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s74-c6-x2.sh
timeout 120 build/bench/symmem-bench p2p -e 2M --kind "$kind" --commit "$C" --json "$OUT/r/p2p.json" > "$OUT/p2p.log" 2>&1
echo "== p2p rc $? at $(el) s"; grep -vE "^\[rank [1-9]" "$OUT/p2p.log" | grep -E "^#|^ +[0-9]+ |rror"
true
