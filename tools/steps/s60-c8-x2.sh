# Steps for tools/call.sh on a 2-GPU machine (session 60, call 8): symmem-bench overlap with the
# floor's runner-up plan timed in the main batch (the floor the faster of the two), both models,
# M 8192 / 16384, once. ~2.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s60-c8-x2.sh
O floor2 SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
python3 - "$OUT/r/floor2.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(r["algo"], r["bytes"], "pick", r.get("floor_pick_us"), "runner-up", r.get("floor_runner_up_us"), "floor", r["gemm_alone_us"], r["floor_plan"])
PY
true
