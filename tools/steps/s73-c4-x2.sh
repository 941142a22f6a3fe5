# Steps for tools/call.sh on a 2-GPU machine (session 73, call 4): why symmem's all-reduce at 1 MiB
# (ll 8.20, push 8.19 us) is behind vLLM's custom all-reduce (8.00, one pull kernel, call 3) at 2
# ranks. Three trees of 49a82c3 (reverted on main; .deps/ab by `tools/ab.sh define`): ob36 (one_shot's
# grid capped at vLLM's 36 blocks, SYMMEM_ONE_SHOT_BLOCKS=36), relax (barrier_block's arrival by a
# relaxed store instead of a release, SYMMEM_BARRIER_ARRIVE_RELAXED=1: vLLM's flags order nothing)
# and both, against main's tree; symmem-bench all_reduce 256 KiB - 4 MiB (every algorithm's column),
# alternating, twice. Then the Collective tests at 2 ranks on main's tree (unchanged library).
# ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s73-c4-x2.sh
AAB ar "ob36 relax both" all_reduce -b 262144 -e 4194304 -f 2
python3 - "$OUT/r" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ar-*.json"))):
    d = json.load(open(f))
    rows = d.get("rows", [])
    print(os.path.basename(f)[:-5].ljust(12), " ".join("%dK:ll %.2f 1s %.2f push %.2f 2s %.2f" % (r["bytes"] >> 10, r.get("ll_us", -1), r.get("one_shot_us", -1),
          r.get("push_us", -1), r.get("two_shot_us", -1)) for r in rows if r.get("op", "all_reduce") == "all_reduce"))
PY
FILTER='Coll*:DeviceApi*' T 2 1
true
