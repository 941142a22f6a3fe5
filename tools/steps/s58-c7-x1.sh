# Steps for tools/call.sh on a 1-GPU machine (session 58, call 7): hopper_gemm_t's k-loop unrolled by
# whole rounds of the ring (each k-block's stage a constant). Checked at odd shapes (a 3-k-block
# loop, shards with 128-row tiles), its transposed overlap tests at 2 ranks on the GPU, timed
# beside cuBLASLt's tile 29 at the 16384-row shapes (session 57/58 ratios: 16384 x 4096 x 7168
# 0.997-1.010, 16384 x 7168 x 4096 over 2 shards 1.003), then its instructions and clock in ncu
# (session 57: 225 M instructions, 1.475 GHz, at 16384 x 4096 x 7168). ~3 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s58-c7-x1.sh
FILTER="Overlap.OwnGemmTransposed*" TLIMIT=120 T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=60000
( export HGEMM_T=1
  H 1000 1032 520 2 8 5 && H 100 200 136 2 8 5 && HGEMM_T_TALL=2 H 3000 2048 1000 2 8 5 0 3 &&
  for s in "16384 4096 7168" "16384 4096 3584"; do HGEMM_TILE=29 HGEMM_SUSTAIN=10 H $s 2 8 10 --json $OUT/r/unrolled.json || break; done &&
  HGEMM_TILE=29 HGEMM_SUSTAIN=10 H 16384 7168 4096 2 8 10 0 2 --json $OUT/r/unrolled.json )
SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_SUSTAIN=1 timeout 120 ncu --clock-control none -k regex:"hopper_gemm_t_kernel" --launch-skip 2 -c 1 --csv \
  --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.max \
  build/symmem-hgemm-probe 16384 4096 7168 2 8 2 > "$OUT/ncu.csv" 2>&1; echo "ncu rc $?"
grep -E '^"[0-9]' "$OUT/ncu.csv" | awk -F'","' '{print $(NF-2) " | " $NF}'
cp "$OUT/ncu.csv" "$OUT/suite.log"
true
