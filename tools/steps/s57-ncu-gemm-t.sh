# Steps for tools/call.sh (session 57): hopper_gemm_t beside cuBLASLt's tile-29 plan (and hopper_gemm)
# under Nsight Compute, one launch each at 16384 x 4096 x 7168 (clocks not locked): the full set
# into $OUT/gemm.ncu-rep, the speed-of-light summary and the L2 traffic printed, and each kernel's
# SASS with its executed-instruction counts and stall samples as CSV ($OUT/src-*.csv).
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s57-ncu-gemm-t.sh
# (Session 57 ran it standalone with its own build of the probe alone; call.sh builds it now.)
NCU=$(command -v ncu)
export SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_TILE=29 HGEMM_SUSTAIN=1
# launches: cuBLASLt's first plan, hopper_gemm, hopper_gemm_t (the checks), then tile 29, hopper_gemm, hopper_gemm_t (graphs)
timeout 300 "$NCU" --clock-control none --set full --import-source no -k regex:"gemm|nvjet" --launch-skip 3 -c 3 \
  --metrics lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_op_write.sum,l1tex__m_xbar2l1tex_read_bytes.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
  -o "$OUT/gemm" -f build/symmem-hgemm-probe 16384 4096 7168 2 8 2 > "$OUT/ncu.log" 2>&1
echo "== ncu rc $? at $(el) s"; tail -3 "$OUT/ncu.log"
"$NCU" -i "$OUT/gemm.ncu-rep" --page raw --csv --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_op_write.sum,l1tex__m_xbar2l1tex_read_bytes.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active > "$OUT/raw.csv" 2>&1
cut -c1-400 "$OUT/raw.csv" | head -8
for k in nvjet hopper_gemm_kernel hopper_gemm_t_kernel; do
  "$NCU" -i "$OUT/gemm.ncu-rep" --page source --csv --print-source sass -k regex:$k > "$OUT/src-$k.csv" 2>&1
  echo "src-$k: $(wc -l < "$OUT/src-$k.csv") lines"; head -c 300 "$OUT/src-$k.csv"; echo
done
