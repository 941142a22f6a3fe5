# Steps for tools/call.sh on a 1-GPU machine (written in session 59, not yet run): why
# hopper_gemm_t's counted instantiation (kSum: what matmul_reduce_scatter's fused form runs) is
# ~1.4% behind the uncounted one at 8B M 16384 (session 59, call 9: t_counting 1474.5-1476.7 us
# against t_order_no_counts 1453.8-1461.1). The probe checks and times both over 2 shards in 16
# row groups, twice; then Nsight Compute, one launch of each (instructions, tensor-pipe activity,
# registers, launch grid), and each one's SASS with executed instructions and stall samples as CSV
# ($OUT/src-*.csv). ~4 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s60-t-counted-x1.sh
for i in 1 2; do
  HGEMM_T=1 HGEMM_T_COUNTED=1 HGEMM_GROUPS=16 HGEMM_SUSTAIN=10 H 16384 4096 7168 2 2 10 0 2 --json "$OUT/r/t-counted.json"
done
NCU=$(command -v ncu)
# launches: cuBLASLt, hopper_gemm and hopper_gemm_t checked, the counted check; -c 2 from the counted one's check
export SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_T_COUNTED=1 HGEMM_GROUPS=16
timeout 300 "$NCU" --clock-control none --set full --import-source no -k regex:"hopper_gemm_t" -c 2 \
  --metrics smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread \
  -o "$OUT/t" -f build/symmem-hgemm-probe 16384 4096 7168 2 2 1 0 2 > "$OUT/ncu.log" 2>&1
echo "== ncu rc $? at $(el) s"; tail -3 "$OUT/ncu.log"
"$NCU" -i "$OUT/t.ncu-rep" --page raw --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,launch__grid_size > "$OUT/raw.csv" 2>&1
cut -c1-400 "$OUT/raw.csv" | head -6
for b in 0 1; do  # (the instantiations' mangled names: hopper_gemm_t_kernel<false> ILb0E, <true> ILb1E)
  "$NCU" -i "$OUT/t.ncu-rep" --page source --csv --print-source sass --kernel-name-base mangled -k regex:"ILb${b}E" > "$OUT/src-counted$b.csv" 2>&1
  echo "src-counted$b: $(wc -l < "$OUT/src-counted$b.csv") lines"; head -c 300 "$OUT/src-counted$b.csv"; echo
done
true
