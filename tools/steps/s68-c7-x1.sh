# Steps for tools/call.sh on a 1-GPU machine (session 68, call 7): where hopper_gemm_t's dynamic
# schedule spends its 2-5% more cycles (call 4: 1894 K -> 1981 K at 16384 x 7168 x 4096). Nsight
# Compute's warp stall samples by instruction for the static kernel and the dynamic one (their two
# check launches), the top instructions of each and the stall totals by kind. ~3 minutes.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c7-x1.sh
export SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_T_DYN=1 HGEMM_SUSTAIN=0
timeout 150 ncu --clock-control none -k regex:"hopper_gemm_t" --launch-skip 0 -c 2 --section SourceCounters --section WarpStateStats \
  --metrics gpu__time_duration.sum,sm__cycles_elapsed.max -o "$OUT/s" -f build/symmem-hgemm-probe 16384 7168 4096 2 8 2 > "$OUT/ncu-s.log" 2>&1
echo "== ncu rc $? at $(el) s"; tail -2 "$OUT/ncu-s.log"
ncu -i "$OUT/s.ncu-rep" --page source --csv --print-source sass > "$OUT/r/src.csv" 2>&1
python3 - "$OUT/r/src.csv" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
kernels, name, hdr, body = [], None, None, None
for r in rows:
    if r and r[0] == "Kernel Name":
        if body: kernels.append((name, body))
        name, hdr, body = r[1], None, []
    elif hdr is None and "Source" in r and "Address" in r:
        hdr = r
    elif hdr is not None:
        try: body.append((int(r[hdr.index("Warp Stall Sampling (All Samples)")]), int(r[hdr.index("Instructions Executed")]), r[hdr.index("Source")].strip()))
        except (ValueError, IndexError): pass
if body: kernels.append((name, body))
for name, body in kernels:
    tot = max(1, sum(b[0] for b in body))
    kinds = collections.Counter()
    for s, n, t in body:
        w = t.split()
        op = w[1] if w and w[0].startswith("@") and len(w) > 1 else (w[0] if w else "?")
        kinds[op.split(".")[0]] += s
    print("== %s: %d instructions, %d stall samples, %d executed" % (name[:90], len(body), tot, sum(b[1] for b in body)))
    print("   by opcode:", ", ".join("%s %.1f%%" % (k, 100.0 * v / tot) for k, v in kinds.most_common(12)))
    for s, n, t in sorted(body, reverse=True)[:18]:
        print("   %7d %5.1f%% %10d  %s" % (s, 100.0 * s / tot, n, t[:90]))
PY
true
