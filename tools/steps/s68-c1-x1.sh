# Steps for tools/call.sh on a 1-GPU machine (session 68, call 1): why the own GEMMs lose cycles
# to cuBLASLt at boost clocks (session 67: 5-13% after a near-idle millisecond, level at the cap).
# (1) symmem-hgemm-probe at 8B mm+rs's 8192 x 4096 x 7168 and ag's 8192 x 7168 x 4096, whole and
# over 2 row shards, after idle and back to back, one machine (session 67 compared whole and
# shards across machines); (2) Nsight Compute at 8192 x 4096 x 7168 (one launch each, clocks
# free, so near boost): cuBLASLt's tile 24 (128 x 256, cluster 2 along the rows: hopper_gemm's
# shape), hopper_gemm and hopper_gemm_t: cycles, clock, tensor-pipe activity, L2 sectors, warp
# stall reasons and the consumers' stall samples by instruction; the L2 request coalescer's
# counters where this ncu has them. ~4 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c1-x1.sh
export SMI_LOG=1
for idle in 1000 0; do
  smi_start idle$idle
  for s in "8192 4096 7168" "8192 7168 4096"; do
    for sh in 0 2; do PR shards SYMMEM_BENCH_IDLE_US=$idle $s 2 8 15 0 $sh; done
  done
  smi_stop idle$idle
done
ncu --query-metrics --chip gh100 > "$OUT/metrics.txt" 2>&1
echo "== lrc / coalescer metrics:"; grep -iE "^lrc|coalesc" "$OUT/metrics.txt" | awk '{print $1}' | head -40
want="lts__t_sectors_srcunit_tex_op_read lts__t_sectors_srcunit_ltcfabric l1tex__m_xbar2l1tex_read_sectors dram__sectors_read sm__pipe_tensor_op_hmma_cycles_active lrc__t_sectors lrc__t_requests lrc__t_sectors_op_read lrc__t_requests_op_read"
for w in $(grep -iE "^lrc__t_(sectors|requests)[a-z_]* " "$OUT/metrics.txt" | awk '{print $1}' | head -8); do want="$want $w"; done
ms=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second
for w in $want; do grep -q "^$w " "$OUT/metrics.txt" && { case $w in sm__pipe*) ms="$ms,$w.avg.pct_of_peak_sustained_elapsed";; *) ms="$ms,$w.sum";; esac; }; done
echo "metrics: $ms"
export SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_TILE=24 HGEMM_SUSTAIN=1
timeout 240 ncu --clock-control none -k regex:"nvjet|hopper_gemm" --launch-skip 3 -c 6 --section SourceCounters --section WarpStateStats \
  --metrics "$ms" -o "$OUT/k" -f build/symmem-hgemm-probe 8192 4096 7168 2 8 2 > "$OUT/ncu.log" 2>&1
echo "== ncu rc $? at $(el) s"; tail -3 "$OUT/ncu.log"
ncu -i "$OUT/k.ncu-rep" --page raw --csv --metrics "$ms" > "$OUT/r/ncu-raw.csv" 2>&1
python3 tools/ncu_summary.py raw "$OUT/r/ncu-raw.csv"
ncu -i "$OUT/k.ncu-rep" --page details --section WarpStateStats > "$OUT/r/ncu-stalls.csv" 2>&1
grep -E "nvjet|hopper_gemm|Stall|Warp Cycles|Avg. Active" "$OUT/r/ncu-stalls.csv" | head -60
for kk in hopper_gemm_kernel hopper_gemm_t_kernel nvjet; do
  ncu -i "$OUT/k.ncu-rep" --page source --csv --print-source sass -k regex:$kk > "$OUT/src-$kk.csv" 2>&1
done
ls -la $OUT/src-*.csv
tar czf "$OUT/r/src.tgz" -C "$OUT" src-hopper_gemm_kernel.csv src-hopper_gemm_t_kernel.csv src-nvjet.csv 2>/dev/null; ls -la $OUT/r/src.tgz
true
