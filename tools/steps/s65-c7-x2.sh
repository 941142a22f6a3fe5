# Steps for tools/call.sh on a 2-GPU machine (session 65, call 7, no device code changed): call 6
# looped hopper_gemm's fused form back at rasters 2 and 8 in one rotation (70B, TP = 2): raster 8
# 0.8% faster at M 8192 (the form the walks pick there) and 3% at M 16384, where it then read 2.5%
# ahead of the transposed form at 8 (the default). In the operation: 70B mm+rs M 8192 with raster 8
# in the alt column, three pairs each way round; M 16384 hopper_gemm's form at raster 8 (alt)
# against the transposed form, two pairs each way round. ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s65-c7-x2.sh
for i in 1 2 3; do
  for first in 0 1; do
    O rs8-$i-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=8192 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_RASTER=8" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
  done
done
for i in 1 2; do
  for first in 0 1; do
    O hg8-$i-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_GEMM_T=0;SYMMEM_OVERLAP_RS_RASTER=8" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
  done
done
true
