# Steps for tools/call.sh on a 2-GPU machine (session 59, call 9): where 8B matmul_reduce_scatter
# M 16384's remaining ~5% over the GEMM alone goes (its fused form in transposed tiles, the
# default since 18ab329): the probe's t_ kinds, summing, counting only, neither, twice. ~3 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s59-c9-x2.sh
for i in 1 2; do
  O probe-8b-$i SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs"
done
true
