# Steps for tools/call.sh on a 1-GPU machine (written in session 57, never run): HopperGemmOptions::
# t_lean's hopper_gemm_t (the warpgroup index broadcast so the k-loop's descriptors can live in
# uniform registers; the descriptors' address added in 32 bits) checked at odd shapes and with row
# shards, then timed in turn with the present kernel, cuBLASLt's tile 29 and hopper_gemm at the
# 16384-row shapes; then its instructions and clock in Nsight Compute beside the present kernel's.
# ~3 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s58-gemm-t-lean-x1.sh
export HGEMM_T=1 HGEMM_T_LEAN=1 HGEMM_SUSTAIN=10
H 1000 1032 520 2 8 5 && H 100 200 136 2 8 5 &&
  H 3000 2048 1000 2 8 5 0 3 &&
  for s in "16384 4096 7168" "16384 7168 4096" "16384 4096 3584"; do
    HGEMM_TILE=29 H $s 2 8 15 --json $OUT/r/gemm-t-lean.json || break
  done &&
  H 16384 7168 4096 2 8 15 0 2 --json $OUT/r/gemm-t-lean.json &&
  SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_T_LEAN=1 HGEMM_SUSTAIN=1 timeout 120 ncu --clock-control none -k regex:"hopper_gemm_t" --launch-skip 2 -c 2 --csv \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
    build/symmem-hgemm-probe 16384 4096 7168 2 8 2 > "$OUT/ncu.csv" 2>&1; echo "ncu rc $?"; grep -E '^"[0-9]' "$OUT/ncu.csv" | awk -F'","' '{print $5 " | " $(NF-2) " | " $NF}' | cut -c1-160
cp "$OUT/ncu.csv" "$OUT/suite.log"
true
