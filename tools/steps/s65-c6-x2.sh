# Steps for tools/call.sh on a 2-GPU machine (session 65's last call, where no 4-GPU kind came):
# the GPU suite's 1- and 2-GPU tiers on the session's final code (ctest gpu_1rank,
# multigpu_2ranks_2gpus, the fault tier, the own GEMM's forms at 2 ranks on 1 GPU and 4 on 2,
# python_gpu_2gpus, the tensor-parallel example), stopped after 260 s; then clusters of 4 against
# 2 for a kernel shaped as hopper_gemm_t (tools/cluster_fit_probe.cu: the 2 x 2 idea's first
# check); TP = 4's reduce-scatter forms looped back again, now with each round in its own order
# (session 63's figures came from a fixed rotation) and TP = 2's 70B fused forms at rasters 2 and 8
# in one rotation (HGEMM_RS_GROUP); hopper_gemm_t on six separately allocated copies of its
# operands (HGEMM_COPIES); one symmem-bench overlap shape (the
# benchmark's order now from bench/round_order.hpp). ~8.5 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s65-c6-x2.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=260 tools/gpu_run.sh --no-bench \
  --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm|python_gpu_2gpus|python_example_tp_mlp_2gpus" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -12
grep -E "\[  PASSED  \]|\[  FAILED  \]|[0-9]+ passed|[0-9]+ failed" $OUT/suite.log | sort | uniq -c | head -30
echo "== cluster fit at $(el) s"
"$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -std=c++17 -arch=sm_90a -o $OUT/cluster-fit tools/cluster_fit_probe.cu > $OUT/cluster-fit.log 2>&1 && $OUT/cluster-fit; rm -f $OUT/cluster-fit
. tools/steps/s63-rs-loop-tp4.sh
# hopper_gemm's fused form (and the transposed one) at raster 8 beside raster 2 in one rotation,
# TP = 2's 70B shapes (HGEMM_RS_GROUP; call 1's runs compared rasters across rotations)
HGEMM_RS=1 HGEMM_GROUPS=8 HGEMM_SUSTAIN=10 HGEMM_RS_GROUP=8 H 8192 8192 14336 2 2 15 0 2 --json $OUT/r/rs-raster.json; grep "raster" $OUT/p.log
HGEMM_RS=1 HGEMM_GROUPS=16 HGEMM_SUSTAIN=10 HGEMM_RS_GROUP=8 H 16384 8192 14336 2 2 15 0 2 --json $OUT/r/rs-raster.json; grep "raster" $OUT/p.log
# the same kernel on separately allocated copies of its operands, in one rotation (HGEMM_COPIES):
# does a GEMM's time move with where its buffers lie?
for s in "16384 14336 8192" "16384 8192 14336" "16384 14336 8192"; do
  echo "== copies $s at $(el) s"
  HGEMM_COPIES=6 HGEMM_SUSTAIN=10 timeout 60 build/symmem-hgemm-probe $s 2 8 15 --json $OUT/r/copies.json 2>&1 | grep -E "copies|error|usage"
done
O one SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=16384 | grep -E "^==|ag\\+mm|mm\\+rs|clocks"
true
