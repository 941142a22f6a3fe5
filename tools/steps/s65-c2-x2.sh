# Steps for tools/call.sh on a 2-GPU machine (session 65, call 2): rasters at the power cap, each
# in the alt column of the same run, both ways round (TP = 2, M 8192 / 16384): (1) all_gather_matmul's
# own GEMM at raster 2 (SYMMEM_OVERLAP_AG_RASTER, new) against its default 8, both models; (2) 8B
# mm+rs's transposed fused form at raster 8 against its default 2 (session 59, before the cap was
# known: 8 0.6-1% slower); (3) 70B mm+rs M 16384: hopper_gemm's fused form at raster 8 (reachable
# since call 1) against the transposed form (default, raster 8). ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s65-c2-x2.sh
for first in 0 1; do
  O ag-r2-first$first SYMMEM_OVERLAP_OPS=ag SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_AG_RASTER=2" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|ag\\+mm|alt"
done
for first in 0 1; do
  O rs8b-r8-first$first SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_RASTER=8" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
done
for first in 0 1; do
  O rs70b-hg8-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_GEMM_T=0;SYMMEM_OVERLAP_RS_RASTER=8" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
done
true
