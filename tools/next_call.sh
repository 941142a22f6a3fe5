#!/usr/bin/env bash
# The next device call, prepared at the end of session 10 (docs/NOTES.md, "Next session"). Before it, here:
#   rm -rf .deps/ab && tools/ab.sh prepare ab-llknobs && tools/ab.sh prepare moe-deep-pipeline
# Then on the device (4 GPUs, carry [".deps"], work tree = main,
# COMMIT=<main sha>): LL format/grid sweep (ab-llknobs), MoE prefill stamps, A/B of moe-deep-pipeline (prefill).
# No tests of main needed first: main's library code is 3789aba's, tested in session 10.
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
. tools/lib.sh
OUT=${OUT:-$PWD/gpu-out}; mkdir -p $OUT; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
# The work tree in build/ first (ab.sh reuses it; the trace and the sweep's launcher come from it).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_GTEST_SOURCE=$PWD/.deps/googletest -DSYMMEM_BUILD_PYTHON=OFF > $OUT/build.log 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem-bench symmem-run >> $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
rm -f $OUT/build.log
# Builds both .deps/ab trees (ab.sh), then times `moe` (prefill only) with each and the work tree.
SYMMEM_MOE_SHAPES=prefill timeout 300 tools/ab.sh run moe > $OUT/ab-moe.txt 2>&1
grep -E "^==|prefill|dispatch|combine" $OUT/ab-moe.txt | head -30
echo "== ab moe done at $(el) s"
SYMMEM_MOE_TRACE=1 SYMMEM_MOE_SHAPES=prefill timeout 60 build/bench/symmem-bench moe > $OUT/moe-trace.log 2>&1
grep -E "trace|prefill" $OUT/moe-trace.log | head -30
echo "== trace done at $(el) s"
SW=.deps/ab/ab-llknobs/build-ab/bench/symmem-bench
for cfg in 32768:512:128 65536:512:128 131072:512:128 32768:1024:128 32768:2048:128 32768:512:64 32768:512:256; do
  [ $(el) -gt 500 ] && break
  IFS=: read NM OB LPB <<< "$cfg"
  for n in 4 2; do
    SYMMEM_LL_NARROW_MAX=$NM SYMMEM_LL_ONE_BLOCK=$OB SYMMEM_LL_LPB=$LPB timeout 25 build/symmem-run --no-prefix -n $n $SW all_reduce -b 4096 -e 262144 > $OUT/sw.log 2>&1
    echo "sweep narrow<=$NM one-block<=$OB lines/block $LPB, n=$n: $(grep -E '^ +[0-9]' $OUT/sw.log | awk '{printf "%s:%s ", $1, $6}')"
  done
done
tail -3 $OUT/sw.log; rm -f $OUT/sw.log
echo "== end at $(el) s"; ls $OUT
