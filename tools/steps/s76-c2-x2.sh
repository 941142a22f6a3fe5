# Steps for tools/call.sh on a 2-GPU machine (session 76, call 2): the order table of symmem-bench
# p2p at 8 B and 4 KiB (SYMMEM_BENCH_P2P_ORDER=1; its new rows: 8-byte puts with the source read as
# usual or through L2 only) beside put_signal and signal_relaxed in the same run, twice; the SASS
# of symmem-bench p2p's and NVSHMEM's ping-pong kernels (cubins in .deps/sass, compiled here);
# the collectives' tests of .deps/ab/llwide (LL grids of two blocks an SM at every team size) at 3
# and 4 ranks on 2 GPUs; then the tier of 4 ranks on 2 GPUs whole (not run since session 71).
#   tools/ab.sh define llwide HEAD SYMMEM_LL_WIDE_GRID_MAX_RANKS=8
#   AB_TARGETS="symmem_gpu_tests symmem-run" COMMIT=<sha> bash tools/call.sh tools/steps/s76-c2-x2.sh
for i in 1 2; do for b in 8 4096; do
  SYMMEM_BENCH_P2P_ORDER=1 timeout 120 build/bench/symmem-bench p2p -b $b -e $b --kind "$kind" --commit "$C" \
    --json "$OUT/r/p2p-order-$b-$i.json" > "$OUT/p.log" 2>&1
  echo "== order $b B run $i rc $? at $(el) s"; grep -E "^# order|^# latency variants" "$OUT/p.log"
done; done
S
BIN=llwide FILTER='Collectives*' T 3 2
BIN=llwide FILTER='Collectives*' T 4 2
SUITE_STOP_S=280 SUITE12 "multigpu_4ranks_2gpus"
true
