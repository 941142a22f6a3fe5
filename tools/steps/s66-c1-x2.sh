# Steps for tools/call.sh on a 2-GPU machine (session 66, call 1): the first GPU run of
# symmem-bench overlap's SYMMEM_OVERLAP_TWINS (session 65, bench code only): each column timed on 3
# TensorParallel instances made alike, the alt column identical to the main one (the default
# deferral), so the spread inside each column is the instance noise. 70B M 16384, then 8B M 8192 /
# 16384 (8B mm+rs M 16384 is the TP = 2 shape nearest the 1.05x goal). ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s66-c1-x2.sh
tw() {  # each row's instances, from the JSON
  python3 - "$OUT/r/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    print("  %-12s M %6s floor %7.1f  main [%s]  alt [%s]  MHz %s/%s" % (r["algo"], r["bytes"], r.get("gemm_alone_us", -1),
          r.get("overlap_twins_us", "-"), r.get("alt_twins_us", "-"), r.get("sm_mhz_overlap"), r.get("sm_mhz_alt")))
PY
}
O twins70 SYMMEM_OVERLAP_TWINS=3 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=2 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=16384 | grep -E "^==|ag\\+mm|mm\\+rs|alt|rror"
tw twins70
O twins8 SYMMEM_OVERLAP_TWINS=3 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=2 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|alt|rror"
tw twins8
O twins8rs SYMMEM_OVERLAP_TWINS=4 SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=2 SYMMEM_OVERLAP_ALT_FIRST=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs|alt|rror"
tw twins8rs
true
