# Steps for tools/call.sh on a 2-GPU machine (session 64, call 5): 70B mm+rs M 8192 at TP = 2, the
# default (hopper_gemm's fused form: the walk model keeps it there) against the transposed form in
# raster 8 (SYMMEM_OVERLAP_RS_GEMM_T=1 in the alt column), both ways round, twice. Call 1 had the
# transposed form 3.5-4% behind at raster 2 in the operation; call 2 had it 0.7-3% ahead looped
# back at both rasters. ~3 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s64-c5-x2.sh
for i in 1 2; do for first in 0 1; do
  O t1-$i-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=8192 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_GEMM_T=1" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
done; done
true
