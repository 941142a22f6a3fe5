# Steps for tools/call.sh on a 2-GPU machine (session 56): the Gemm tuner timing cuBLASLt's
# candidates in interleaved rounds. Its picks against every candidate at the power cap (the probe's
# tuned pick marked *), the overlap tests at 2 GPUs, then symmem-bench overlap at TP = 2 (both
# models, M 8192 / 16384) three times: the floor's spread from run to run and the ratios against
# the now-tuned floor. ~4 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s56-tune-x2.sh
for s in "16384 4096 7168" "16384 7168 4096" "8192 4096 7168" "4096 4096 7168" "16384 8192 14336" "16384 14336 8192"; do
  echo "== $s at $(el) s"; HGEMM_CANDIDATES=1 HGEMM_SUSTAIN=10 build/symmem-hgemm-probe $s 2 2 15 --json $OUT/r/cands.json 2>&1 | grep -vE "^gemm|plan:"
done
FILTER="Overlap*" T 2 1
for i in 1 2 3; do O tuned-$i SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm|ag"; done
true
