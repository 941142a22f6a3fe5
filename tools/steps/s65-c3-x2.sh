# Steps for tools/call.sh on a 2-GPU machine (session 65, call 3): call 2 found all_gather_matmul's
# own GEMM at 70B M 16384 (TP = 2) faster at raster 2 than at its default 8 (0.997 / 1.022 against
# 1.033 / 1.032, alt second / first) where 8 won at every other shape by 1-3%. Here 70B ag at M
# 8192 / 16384, raster 2 in the alt column three times each way round, then raster 4 once each
# way: on another pair of GPUs, enough pairs to tell a rule from a machine. ~3.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s65-c3-x2.sh
for i in 1 2 3; do
  for first in 0 1; do
    O ag70-r2-$i-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=ag SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_AG_RASTER=2" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|ag\\+mm|alt"
  done
done
for first in 0 1; do
  O ag70-r4-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=ag SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_AG_RASTER=4" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|ag\\+mm|alt"
done
true
