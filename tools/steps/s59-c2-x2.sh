# Steps for tools/call.sh on a 2-GPU machine (session 59, call 2): does the fused form's raster
# (kReduceGroup = 2 row tiles at a time) cost matmul_reduce_scatter's transposed form the ~6% that
# call 1 found between the operation and its GEMM looped back with the copies beside it (there
# raster 8)? The probe looped back at rasters 2 and 8 with the operation's 16 row groups a block,
# on both GPUs at once; then symmem-bench overlap, the fused form in transposed tiles forced, at
# raster 2 and 8 (SYMMEM_OVERLAP_RS_RASTER) in its two columns, both ways round. ~5 minutes.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s59-c2-x2.sh
for g in 2 8; do
  for d in 0 1; do
    HGEMM_DEVICE=$d HGEMM_RS_PEER=$((1 - d)) HGEMM_RS=1 HGEMM_GROUPS=16 HGEMM_SUSTAIN=10 timeout 120 \
      build/symmem-hgemm-probe 16384 4096 7168 2 $g 10 0 2 --json "$OUT/r/rs-raster.json" > "$OUT/p$d.log" 2>&1 &
  done
  wait
  echo "== rs raster $g"; grep -h "rs forms" "$OUT"/p0.log "$OUT"/p1.log
done
F="SYMMEM_OVERLAP_OWN_RS=fused;SYMMEM_OVERLAP_RS_GEMM_T=1"
O raster-2v8 SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_RS_GEMM_T=1 SYMMEM_OVERLAP_ALT="$F;SYMMEM_OVERLAP_RS_RASTER=8" SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\\+rs"
O raster-8v2 SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_RS_GEMM_T=1 SYMMEM_OVERLAP_RS_RASTER=8 SYMMEM_OVERLAP_ALT="$F;SYMMEM_OVERLAP_RS_RASTER=2" SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\\+rs"
true
