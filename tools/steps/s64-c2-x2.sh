# Steps for tools/call.sh on a 2-GPU machine (session 64, call 2): the fused forms' raster at 70B.
# Call 1 found both H200s at their 700 W cap through 70B mm+rs (SM clock 1200-1440 MHz), so a
# form's bytes from memory cost clock. With raster 2 (detail::kReduceGroup) a wave of 66 clusters
# covers 2 row tiles and every column of N 8192: the whole of B (235 MB at K 14336) streams from
# memory once per 2 row tiles, ~12 GB a 16384-row GEMM; raster 8 ~5 GB. Looped back
# (HGEMM_RS=1, both GPUs at once, each under the clock log) at M 16384 rasters 2, 8, 16, M 8192 2, 8;
# then the operation at raster 8 in the alt column (SYMMEM_OVERLAP_RS_RASTER, rank-local), both
# ways round. ~4 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s64-c2-x2.sh
for mg in "16384 2" "16384 8" "16384 16" "8192 2" "8192 8"; do set -- $mg; m=$1 g=$2
  SMI_LOG=1 smi_start loop-$m-g$g
  pids=
  for d in 0 1; do
    HGEMM_RS=1 HGEMM_GROUPS=$((m / 1024)) HGEMM_SUSTAIN=10 HGEMM_DEVICE=$d timeout 90 build/symmem-hgemm-probe $m 8192 14336 2 $g 15 0 2 \
      --json $OUT/r/rs-loop-$m-g$g-d$d.json > $OUT/p$d.log 2>&1 &
    pids="$pids $!"
  done
  wait $pids
  echo "== M $m raster $g at $(el) s"; grep -hE "rs forms|error|Error" $OUT/p0.log $OUT/p1.log | sed 's/.*groups, defer_halves 2: //'
  smi_stop loop-$m-g$g
done
for first in 0 1; do
  O r8-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_RASTER=8" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
done
true
