# Steps for tools/call.sh on a 2-GPU machine (session 69's last call, the final code): (1) the 1-
# and 2-GPU suite (as s68-c6-x2.sh: every tier a 2-GPU machine runs, the Python and fault tiers
# included), stopped after 250 s; (2) the README's main job (symmem-bench, p2p and the
# collectives beside NCCL) where time is left. ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s69-c2-x2.sh
SUITE12
if [ "$(el)" -lt 450 ]; then
  echo "== symmem-bench (the main job) at $(el) s"
  timeout $(( 560 - $(el) )) build/bench/symmem-bench --kind "$kind" --commit "$C" --json "$OUT/r/main-job.json" > "$OUT/main-job.log" 2>&1
  echo "rc $? at $(el) s"; grep -vE "^\[rank [1-9]" "$OUT/main-job.log" | grep -E "^#|^ +[0-9]+ " | head -60
fi
true
