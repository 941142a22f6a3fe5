# Steps for tools/call.sh on a 2-GPU machine (session 61, call 4): symmem-bench overlap 70B, M 8192 /
# 16384, the session's final code against the tree before it (.deps/ab/3d70f76: tools/ab.sh
# prepare 3d70f76), alternating, twice: call 3 read 70B mm+rs M 16384 at 1.057x the GEMM alone,
# session 60 at 1.022-1.025, and its fused form runs on hopper_gemm_t, whose descriptors changed.
# ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s61-c4-x2.sh
for i in 1 2; do
  O new70-$i SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
  BIN=3d70f76 O base70-$i SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
done
true
