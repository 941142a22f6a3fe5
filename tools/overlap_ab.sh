#!/usr/bin/env bash
# Two settings of the overlap compared both ways round in symmem-bench overlap (session 37: the
# alt column reads 0-64 us slower at 70B mm+rs even when both TensorParallels are made alike, so
# each setting takes each column and the two places are averaged).
#   tools/overlap_ab.sh "A" "B" [passes]     A, B: VAR=value[;VAR=value...] ("" for the defaults)
# e.g. tools/overlap_ab.sh "SYMMEM_OVERLAP_GEMM=own" "SYMMEM_OVERLAP_GEMM=cublas" 2
# Needs build/bench/symmem-bench (or SYMMEM_BENCH=<another build's>); SYMMEM_OVERLAP_MODELS / SYMMEM_OVERLAP_M pass through. JSON in
# $OUT/ab-<n>.json; prints each shape's mean of A and of B over every run and place.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
A=${1-} B=${2-} passes=${3:-2}
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
kind=$(gpu_kind)
# The alt spec: the other setting, with the main one's variables it does not set emptied (unset).
alt_of() {  # main alt
  local spec=$2 v
  IFS=';' read -ra mv <<< "$1"
  for v in "${mv[@]}"; do [ -n "$v" ] && [[ ";$2;" != *";${v%%=*}="* ]] && spec="${spec:+$spec;}${v%%=*}="; done
  echo "${spec:-SYMMEM_OVERLAP_AB_NONE=1}"
}
run=0
for p in $(seq "$passes"); do
  for order in AB BA; do
    if [ $order = AB ]; then main=$A alt=$B; else main=$B alt=$A; fi
    run=$((run + 1))
    IFS=';' read -ra vars <<< "$main"
    env "${vars[@]}" SYMMEM_OVERLAP_ALT="$(alt_of "$main" "$alt")" timeout 200 "${SYMMEM_BENCH:-build/bench/symmem-bench}" overlap --kind "$kind" \
      --commit "${COMMIT:-work}" --json "$OUT/ab-$run-$order.json" > "$OUT/ab.log" 2>&1 || { echo "run $run failed"; tail -5 "$OUT/ab.log"; }
    echo "== run $run: $order (first: ${main:-defaults}; alt: ${alt:-defaults})"
    grep -vE "^\[rank [1-9]" "$OUT/ab.log" | grep -E "ag\+mm|mm\+rs"
  done
done
rm -f "$OUT/ab.log" "$OUT"/ab-*.svg
python3 - "$OUT" <<'PY'
import glob, json, sys, collections
s = collections.defaultdict(lambda: {"A": [], "B": []})
for f in sorted(glob.glob(sys.argv[1] + "/ab-*.json")):
    order = f.rsplit("-", 1)[1][:2]
    for r in json.load(open(f))["rows"]:
        if r.get("overlap_alt_us") is None: continue
        key = (r["algo"], r["bytes"])
        s[key][order[0]].append(r["overlap_us"]); s[key][order[1]].append(r["overlap_alt_us"])
print("shape            M      A (mean)   B (mean)   B / A")
for (algo, m), v in sorted(s.items()):
    a, b = sum(v["A"]) / len(v["A"]), sum(v["B"]) / len(v["B"])
    print(f"{algo:14s} {m:6d} {a:10.1f} {b:10.1f} {b / a:7.3f}")
PY
