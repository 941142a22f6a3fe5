#!/usr/bin/env bash
# A device call of session 11 (4 GPUs, carry [".deps"], COMMIT=<sha>): build, the MoE prefill with
# the grid split between the next round's sends and this round's copy (SWEEP: share:round:backoff
# items; SYMMEM_MOE_SEND_SHARE 0 = the old order), the stamps at round TRACE, then the GPU tests
# TESTS (ctest -R) stopped after STOP_S seconds.
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-$PWD/gpu-out}; mkdir -p $OUT; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
SYMMEM_BENCH_ALL=0 SYMMEM_BENCH_MOE=0 SYMMEM_BENCH_OVERLAP=0 SYMMEM_BENCH_PYTHON=0 tools/gpu_run.sh --no-tests --no-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "== built at $(el) s"
for cfg in ${SWEEP:-75:512: 75:512:0 50:512: 88:512: 75:1024: 88:1024:}; do
  IFS=: read SH RT BO <<< "$cfg"
  SYMMEM_MOE_BACKOFF_NS=$BO SYMMEM_MOE_SEND_SHARE=$SH SYMMEM_MOE_ROUND_TOKENS=$RT SYMMEM_MOE_SHAPES=prefill timeout 60 build/bench/symmem-bench moe > $OUT/m.log 2>&1
  echo "share $SH round $RT backoff ${BO:-default}:"; grep -E '^ +prefill' $OUT/m.log || tail -5 $OUT/m.log
done
[ -n "${TRACE:-}" ] && SYMMEM_MOE_TRACE=1 SYMMEM_MOE_ROUND_TOKENS=$TRACE SYMMEM_MOE_SHAPES=prefill timeout 60 build/bench/symmem-bench moe 2>&1 | grep -E "^# trace"
rm -f $OUT/m.log
echo "== sweep done at $(el) s"
COMMIT=${COMMIT:-x} SYMMEM_CTEST_STOP_S=${STOP_S:-260} tools/gpu_run.sh --no-bench --ctest-args "-R ${TESTS:-multigpu|gpu_1rank} --timeout 150" 2>&1 | grep -v "^== built"
echo "== end at $(el) s"
