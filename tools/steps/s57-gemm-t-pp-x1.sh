# Steps for tools/call.sh on a 1-GPU machine (session 57): hopper_gemm_t in ping-pong form checked
# (odd shapes, one k-block, one tile, a consumer with no tile) and timed against cuBLASLt's tile-29
# plan (HGEMM_TILE=29) and hopper_gemm at the 16384-row shapes, raster groups 2 and 8; then Nsight
# Compute's counters for tile 29, hopper_gemm and hopper_gemm_t at 16384 x 4096 x 7168.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s57-gemm-t-pp-x1.sh
export HGEMM_T=1 HGEMM_SUSTAIN=10
H 1000 1032 520 2 2 5 && H 1000 1032 40 2 2 5 &&
  H 170 264 72 2 2 5 && H 100 200 136 2 2 5 &&
  H 3000 2048 1000 2 2 5 &&
  for s in "16384 4096 7168" "16384 7168 4096" "16384 4096 3584" "8192 4096 7168"; do
    for g in 2 8; do HGEMM_TILE=29 H $s 2 $g 15 --json $OUT/r/gemm-t.json || break 2; done
  done &&
  SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_TILE=29 HGEMM_SUSTAIN=1 timeout 120 ncu --clock-control none -k regex:"gemm|nvjet" --launch-skip 3 -c 3 --csv \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum \
    build/symmem-hgemm-probe 16384 4096 7168 2 8 2 > "$OUT/ncu.csv" 2>&1; echo "ncu rc $?"; grep -E '^"[0-9]' "$OUT/ncu.csv" | awk -F'","' '{print $5 " | " $(NF-2) " | " $NF}' | cut -c1-160
cp "$OUT/ncu.csv" "$OUT/suite.log"
true
