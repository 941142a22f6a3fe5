# Steps for tools/call.sh on a 2-GPU machine (session 64, call 4: the session's last device code,
# after call 3's tests): symmem-bench overlap at TP = 2, both models, M 8192 / 16384, under the
# clock log; then 70B mm+rs M 16384 with hopper_gemm's fused form (SYMMEM_OVERLAP_RS_GEMM_T=0) in
# the alt column, both ways round (the transposed form now in raster 8). ~3.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s64-c4-x2.sh
SMI_LOG=1 O final SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|GPU"
for first in 0 1; do
  O t0-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_GEMM_T=0" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
done
true
