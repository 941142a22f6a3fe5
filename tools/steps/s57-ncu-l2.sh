# Steps for tools/call.sh (session 57, 1 GPU): where cuBLASLt's tile 29 and hopper_gemm_t (ping-pong) differ
# in L2 traffic at 16384 x 4096 x 7168: the L2's sectors and requests by source unit, hits and
# misses, as many of the wanted counters as this ncu knows (printed as CSV), and hopper_gemm_t's
# SASS with executions and stall samples ($OUT/src-t.csv).
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s57-ncu-l2.sh
# (Session 57 ran it standalone with its own build of the probe alone; call.sh builds it now.)
ncu --query-metrics --chip gh100 > "$OUT/metrics.txt" 2>&1
want="lts__t_sectors_srcunit_tex_op_read lts__t_requests_srcunit_tex_op_read lts__t_sectors_srcunit_tex_op_read_lookup_hit lts__t_sectors_srcunit_tex_op_read_lookup_miss lts__t_sectors_srcunit_ltcfabric lts__t_sectors_op_read lts__t_sectors lts__t_requests_srcunit_tex lts__t_sectors_srcunit_tex l1tex__m_xbar2l1tex_read_sectors lts__d_sectors_fill_sysmem lts__t_sectors_srcnode_gpc dram__sectors_read"
ms=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
for w in $want; do grep -q "^$w " "$OUT/metrics.txt" && ms="$ms,$w.sum"; done
echo "metrics: $ms"
export SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_TILE=29 HGEMM_SUSTAIN=1
timeout 200 ncu --clock-control none -k regex:"nvjet|hopper_gemm_t" --launch-skip 2 -c 2 --section SourceCounters --metrics "$ms" \
  -o "$OUT/l2" -f build/symmem-hgemm-probe 16384 4096 7168 2 8 2 > "$OUT/ncu.log" 2>&1
echo "== ncu rc $? at $(el) s"; tail -2 "$OUT/ncu.log"
ncu -i "$OUT/l2.ncu-rep" --page raw --csv --metrics "$ms" > "$OUT/raw.csv" 2>&1
python3 tools/ncu_summary.py raw "$OUT/raw.csv"
ncu -i "$OUT/l2.ncu-rep" --page source --csv --print-source sass -k regex:hopper_gemm_t > "$OUT/src-t.csv" 2>&1
echo "src-t: $(wc -l < "$OUT/src-t.csv") lines"
