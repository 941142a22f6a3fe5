# Steps for tools/call.sh on a 2-GPU machine (session 60, call 7): the own GEMMs' stage waits with a
# suspend-time hint, against the tree before (.deps/ab/668f6dc: tools/ab.sh prepare 668f6dc,
# AB_TARGETS=symmem-hgemm-probe). Overlap* at 2 ranks; the probe's check and time against cuBLASLt
# (8B mm+rs's and 70B mm+rs M 8192's GEMM shapes), alternating trees, twice; symmem-bench overlap
# 8B M 8192 / 16384, alternating, twice. ~5 minutes with the start.
#   AB_TARGETS=symmem-hgemm-probe EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s60-c7-x2.sh
FILTER="Overlap*" TLIMIT=150 T 2 1
if tests_passed; then
  for i in 1 2; do
    for s in "16384 4096 7168" "8192 8192 14336"; do
      PB build/symmem-hgemm-probe sleep-$i $s 2 8 10
      PB .deps/ab/668f6dc/build-ab/symmem-hgemm-probe spin-$i $s 2 8 10
    done
  done
  for i in 1 2; do
    O sleep-$i SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
    BIN=668f6dc O spin-$i SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
  done
fi
true
