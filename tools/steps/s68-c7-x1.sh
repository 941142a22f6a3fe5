# Steps for tools/call.sh on a 1-GPU machine (session 68, call 7): where hopper_gemm_t's dynamic
# schedule spends its 2-5% more cycles (call 4: 1894 K -> 1981 K at 16384 x 7168 x 4096). Nsight
# Compute's warp stall samples by instruction for the static kernel and the dynamic one (their two
# check launches), the top instructions of each and the stall totals by kind. ~3 minutes.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c7-x1.sh
export SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_T_DYN=1 HGEMM_SUSTAIN=0
timeout 150 ncu --clock-control none -k regex:"hopper_gemm_t" --launch-skip 0 -c 2 --section SourceCounters --section WarpStateStats \
  --metrics gpu__time_duration.sum,sm__cycles_elapsed.max -o "$OUT/s" -f build/symmem-hgemm-probe 16384 7168 4096 2 8 2 > "$OUT/ncu-s.log" 2>&1
echo "== ncu rc $? at $(el) s"; tail -2 "$OUT/ncu-s.log"
for kk in "kernelILb0ELb0ELb0E" "kernelILb0ELb0ELb1E"; do
  ncu -i "$OUT/s.ncu-rep" --page source --csv --print-source sass --print-kernel-base mangled -k regex:"$kk" > "$OUT/r/src-$kk.csv" 2>&1
  python3 - "$OUT/r/src-$kk.csv" "$kk" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
hi = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
hdr = rows[hi]
src, st, ie = hdr.index("Source"), hdr.index("Warp Stall Sampling (All Samples)"), hdr.index("Instructions Executed")
body = []
for r in rows[hi + 1:]:
    if len(r) <= max(src, st, ie) or r[0] in ("Kernel Name", "Address"): 
        if body: break
        continue
    try: body.append((int(r[st]), int(r[ie]), r[src].strip()))
    except ValueError: pass
tot = sum(b[0] for b in body)
kinds = collections.Counter()
for s, n, t in body:
    op = t.split()[0] if not t.startswith("@") else t.split()[1]
    kinds[op.split(".")[0]] += s
print("== %s: %d instructions, %d stall samples, %d executed" % (sys.argv[2], len(body), tot, sum(b[1] for b in body)))
print("   by opcode:", ", ".join("%s %.1f%%" % (k, 100.0 * v / tot) for k, v in kinds.most_common(12)))
for s, n, t in sorted(body, reverse=True)[:18]:
    print("   %7d %5.1f%% %10d  %s" % (s, 100.0 * s / tot, n, t[:90]))
PY
done
true
