# Steps for tools/call.sh on a 2-GPU machine (session 69's last call, the final code): broadcast's
# push at 2 ranks with the root's own copy on a third of the blocks (calls 4-5's v1split, now on
# main; copy_bytes2 reverted) against efb5656 (every root block copying both its pieces),
# alternating, twice each, 1-16 MiB; then the 1- and 2-GPU suite (as s69-c2-x2.sh), stopped after
# 250 s. ~7 minutes with the start.
#   tools/ab.sh prepare efb5656; COMMIT=<sha> bash tools/call.sh tools/steps/s69-c6-x2.sh
for i in 1 2; do
  A bc-split-$i broadcast -b 1048576 -e 16777216 -f 2
  BIN=efb5656 A bc-before-$i broadcast -b 1048576 -e 16777216 -f 2
done
python3 - "$OUT"/r <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/bc-*.json")):
    rows = json.load(open(f))["rows"]
    print("%-12s" % os.path.basename(f)[:-5], "  ".join("%dM push %.2f direct %.2f nccl %.2f" % (r["bytes"] >> 20, r.get("push_us", -1), r.get("direct_us", -1), r["nccl_us"]) for r in rows))
PY
COMMIT=$C SYMMEM_CTEST_STOP_S=250 tools/gpu_run.sh --no-bench \
  --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm|python_gpu_2gpus|python_example_tp_mlp_2gpus" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -12
grep -E "\[  PASSED  \]|\[  FAILED  \]|[0-9]+ passed|[0-9]+ failed" $OUT/suite.log | sort | uniq -c | head -30
true
