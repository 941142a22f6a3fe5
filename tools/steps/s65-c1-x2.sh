# Steps for tools/call.sh on a 2-GPU machine (session 65, call 1): (1) the clock records' first GPU
# run (bench/clocks, built after session 64's last call): the host tests' BenchClocks.* (NVML
# sampled on this machine); (2) hopper_gemm's fused form with its raster clipped to a shard, not a
# row group (SYMMEM_OVERLAP_RS_RASTER now reaches it; its default stays 2): the GPU suite's 1- and
# 2-GPU tiers with the own GEMM's forms, stopped after 200 s; (3) that form looped back at 70B M
# 8192 TP = 2 (8 row groups a 4096-row shard) at rasters 2 and 8, twice each; (4) symmem-bench
# overlap at TP = 2, 70B, M 8192 / 16384 with raster 8 in the alt column (mm+rs M 8192 runs
# hopper_gemm's fused form), clock sampling on (alt second) and off (alt first): the "#   ...
# clocks" lines should read ~1200-1500 MHz and ~690 W. ~7 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s65-c1-x2.sh
cmake --build build --target symmem_host_tests > $OUT/host-build.log 2>&1 && \
  build/tests/symmem_host_tests --gtest_filter='BenchClocks.*' 2>&1 | tail -4
COMMIT=$C SYMMEM_CTEST_STOP_S=200 tools/gpu_run.sh --no-bench \
  --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus|multigpu_own_gemm" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -8
grep -E "\[  PASSED  \]|\[  FAILED  \]" $OUT/suite.log | sort | uniq -c | head -20
for g in 2 8 2 8; do
  echo "== probe raster $g at $(el) s"
  HGEMM_RS=1 HGEMM_GROUPS=8 HGEMM_SUSTAIN=10 timeout 60 build/symmem-hgemm-probe 8192 8192 14336 2 $g 15 0 2 \
    --json $OUT/r/rs-loop-g$g.json 2>&1 | grep -E "rs forms|error|usage|bad"
done
O clocks SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_RASTER=8" SYMMEM_OVERLAP_ALT_FIRST=0 | grep -E "^==|ag\\+mm|mm\\+rs|clocks|alt"
O no-clocks SYMMEM_BENCH_CLOCKS=0 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_RASTER=8" SYMMEM_OVERLAP_ALT_FIRST=1 | grep -E "^==|ag\\+mm|mm\\+rs|clocks|alt"
true
