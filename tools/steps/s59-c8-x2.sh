# Steps for tools/call.sh on a 2-GPU machine (session 59, call 8): hopper_gemm's unrolled k-loop.
# Overlap* at 2 ranks, a GPU each; then, alternating with the tree before it (.deps/ab/18ab329,
# tools/ab.sh prepare 18ab329, AB_TARGETS="symmem-hgemm-probe"), the probe's check and time
# against cuBLASLt at the cap (8B mm+rs's and 70B mm+rs M 8192's GEMM shapes) and symmem-bench
# overlap at 70B M 8192 (its mm+rs runs the fused form on hopper_gemm). ~6 minutes with the start.
#   AB_TARGETS=symmem-hgemm-probe EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s59-c8-x2.sh
FILTER="Overlap*" TLIMIT=150 T 2 1
if tests_passed; then
  for i in 1 2; do
    for s in "16384 4096 7168" "8192 8192 14336"; do
      PB build/symmem-hgemm-probe unrolled $s 2 8 10
      PB .deps/ab/18ab329/build-ab/symmem-hgemm-probe rolled $s 2 8 10
    done
  done
  for i in 1 2; do
    O unrolled-$i SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192 | grep -E "^==|mm\\+rs"
    BIN=18ab329 O rolled-$i SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192 | grep -E "^==|mm\\+rs"
  done
fi
true
