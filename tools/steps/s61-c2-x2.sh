# Steps for tools/call.sh on a 2-GPU machine (session 61, call 2): the GPU suite's C++ tiers at 1
# and 2 GPUs (ctest gpu_1rank, multigpu_2ranks_2gpus, multigpu_fault_2ranks_2gpus with the new
# Fault.AgreedStepsStopEveryRankTogether, the own GEMM's forms at 2 ranks on 1 GPU and 4 on 2),
# stopped after 240 s; the SASS of hopper_gemm_t with its descriptors as low words (.deps/sass);
# then, against the tree before the session (.deps/ab/base, AB_TARGETS=symmem-hgemm-probe), the
# probe's hopper_gemm_t at 8B mm+rs's and 70B's GEMM shapes and symmem-bench overlap 8B M 8192 /
# 16384, alternating trees, twice. ~8 minutes with the start.
#   AB_TARGETS=symmem-hgemm-probe EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s61-c2-x2.sh
COMMIT=$C SYMMEM_CTEST_STOP_S=240 tools/gpu_run.sh --no-bench \
  --ctest-args "-R gpu_1rank|multigpu_2ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm" > $OUT/suite.log 2>&1
echo "== suite rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -12
grep -E "\[  PASSED  \]|\[  FAILED  \]|[0-9]+ passed|[0-9]+ failed" $OUT/suite.log | sort | uniq -c | head -30
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
mkdir -p "$OUT/sass"
for f in .deps/sass/*.cubin; do "$CUOBJ" -sass "$f" > "$OUT/sass/$(basename "$f" .cubin).sass" 2>&1; done
for f in "$OUT"/sass/*.sass; do echo "$(basename "$f"): $(grep -c HGMMA "$f") HGMMA, $(grep -c R2UR "$f") R2UR, $(grep -c 'UIADD3.X' "$f") UIADD3.X, $(grep -cE '^ +/\*[0-9a-f]{4}\*/' "$f") instructions"; done
tar czf "$OUT/sass.tgz" -C "$OUT" sass && rm -rf "$OUT/sass"
for i in 1 2; do
  for s in "16384 4096 7168" "8192 8192 14336"; do
    HGEMM_T=1 PB build/symmem-hgemm-probe new-$i $s 2 8 10
    HGEMM_T=1 PB .deps/ab/base/build-ab/symmem-hgemm-probe base-$i $s 2 8 10
  done
done
for i in 1 2; do
  O new-$i SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
  BIN=base O base-$i SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs"
done
true
