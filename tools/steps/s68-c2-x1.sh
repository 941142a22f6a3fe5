# Steps for tools/call.sh on a 1-GPU machine (session 68, call 2). Call 1 found cuBLASLt's timed
# runs in symmem-hgemm-probe reading A with a NaN shard where shards are given (4-16% faster than on
# real data); the probe now times it on a clean copy. (1) Session 67's table again, over 2 row
# shards, both duty cycles: TP = 2's GEMMs. (2) Nsight Compute at 8192 x 4096 x 7168, clocks free:
# the L2 request coalescer's counters for cuBLASLt's tile 24 and the own GEMMs (call 1: tile 24 is
# served 91 M L2 sectors where hopper_gemm, the same tile shape and cluster, takes 116 M, for the
# same 176 M delivered to the SMs), and hopper_gemm at rasters 1, 2, 4, 8, 16. (3) hopper_gemm's
# rasters timed after idle. ~5 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c2-x1.sh
export SMI_LOG=1
for idle in 1000 0; do
  smi_start idle$idle
  for s in "8192 7168 4096" "8192 4096 7168" "16384 7168 4096" "16384 4096 7168" "8192 14336 8192" "8192 8192 14336"; do
    PR shards SYMMEM_BENCH_IDLE_US=$idle $s 2 8 15 0 2
  done
  smi_stop idle$idle
done
ms=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,l1tex__m_xbar2l1tex_read_sectors.sum,dram__sectors_read.sum
for w in lrc__request_sectors_op_read_coalescable lrc__request_sectors_op_read_coalescing_achieved_type_hardware lrc__request_sectors_op_read_coalescing_achieved_type_programmatic lrc__request_sectors_op_read_coalescing_type_programmatic lrc__xbar2lrc_requests_op_read lrc__lts2lrc_sectors_op_read lrc__lrc2xbar_sectors_op_read lrc__xbar2gpc_sectors_op_read lrc__lrc2xbar_sectors_op_read_coalescing_achieved_type_hardware lrc__xbar2lrc_requests_op_read_coalescing_type_programmatic; do ms="$ms,$w.sum"; done
export SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_TILE=24 HGEMM_SUSTAIN=1
for g in 8 1 2 4 16; do
  [ $g = 8 ] && c=3 || c=2
  timeout 100 ncu --clock-control none -k regex:"nvjet|hopper_gemm" --launch-skip 3 -c $c --metrics "$ms" -o "$OUT/g$g" -f \
    build/symmem-hgemm-probe 8192 4096 7168 2 $g 2 > "$OUT/ncu-g$g.log" 2>&1
  echo "== ncu group $g rc $? at $(el) s"
  ncu -i "$OUT/g$g.ncu-rep" --page raw --csv --metrics "$ms" > "$OUT/r/ncu-g$g.csv" 2>&1
  python3 tools/ncu_summary.py raw "$OUT/r/ncu-g$g.csv"
done
unset SYMMEM_GEMM_TUNE HGEMM_TILE
for idle in 1000 0; do
  for g in 1 2 4 8 16; do PR shards SYMMEM_BENCH_IDLE_US=$idle 8192 4096 7168 2 $g 15 0 0; done
done
true
