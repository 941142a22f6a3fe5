# Steps for tools/call.sh on a 2-GPU machine (session 64, call 3: the fused forms' raster by C's
# width, detail::reduce_raster): the GPU suite's 1- and 2-GPU tiers with the own GEMM's forms (at
# 2 ranks on 1 GPU and 4 on 2), stopped after 200 s; then 70B mm+rs at TP = 2 with the old raster
# (SYMMEM_OVERLAP_RS_RASTER=2) in the alt column, both ways round. ~6 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s64-c3-x2.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=200 tools/gpu_run.sh --no-bench \
  --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus|multigpu_own_gemm" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -8
grep -E "\[  PASSED  \]|\[  FAILED  \]" $OUT/suite.log | sort | uniq -c | head -20
for first in 0 1; do
  O r2-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_RASTER=2" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
done
true
