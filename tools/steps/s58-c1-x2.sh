# (Ran in session 58 call 1, when HGEMM_T_LEAN still chose t_lean's kernel; it is gone since.)
# Steps for tools/call.sh on a 2-GPU machine (session 58's first call): Overlap* at 2 ranks, a GPU
# each, as every call must first (ClusterFit, kOwnGatherT's routing untested), the new fused form on
# hopper_gemm_t apart; t_lean's kernel checked and timed on GPU 0; the Gemm tuner's pick after its
# warm-up against every candidate at the cap; then, if the transposed fused form passed, its tests
# at 2 on one GPU and 4 on two and the TP = 2 A/B. ~7 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s58-c1-x2.sh
FILTER="Overlap*-Overlap.OwnGemmTransposedReduce*" TLIMIT=200 T 2 1
FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=60 T 2 1 SYMMEM_TIMEOUT_MS=20000
rst_ok=0; tail -3 "$OUT/summary.txt" | grep -q "rc 0" && rst_ok=1
( export HGEMM_T=1 HGEMM_T_LEAN=1 HGEMM_SUSTAIN=10
  H 1000 1032 520 2 8 5 && H 100 200 136 2 8 5 && H 3000 2048 1000 2 8 5 0 3 &&
  for s in "16384 4096 7168" "16384 7168 4096"; do
    HGEMM_TILE=29 H $s 2 8 15 --json $OUT/r/gemm-t-lean.json || break; grep -E "us|TFLOP" "$OUT/p.log" | tail -4
  done )
for s in "16384 4096 7168" "16384 7168 4096"; do for i in 1 2; do
  echo "== candidates $s ($i)"; HGEMM_CANDIDATES=1 HGEMM_SUSTAIN=10 timeout 90 build/symmem-hgemm-probe $s 2 8 5 2>&1 | tail -22
done; done
if [ $rst_ok = 1 ]; then
  FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=100 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=60000
  FILTER="Overlap.OwnGemmTransposedReduce*" TLIMIT=120 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000
  for first in 0 1; do
    O rst-f$first SYMMEM_OVERLAP_OWN_RS=fused SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_GEMM_T=1 SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm\\+rs"
  done
fi
true
