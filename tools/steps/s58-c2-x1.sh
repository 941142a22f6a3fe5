# Steps for tools/call.sh on a 1-GPU machine (session 58): matmul_reduce_scatter's forms looped back
# (HGEMM_RS=1: partials landed beforehand, nothing waits) at TP = 2's 8B shapes, 1 and 4 row
# groups: is the fused form on hopper_gemm_t (1.109-1.125x the GEMM alone in operation, call 1)
# slow by itself? Then its kernel (kSum) beside the plain one over the same 2 shards in Nsight
# Compute (one launch each, clocks free). ~4 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s58-c2-x1.sh
for s in "16384 4096 7168" "8192 4096 7168"; do for g in 1 4; do
  HGEMM_RS=1 HGEMM_GROUPS=$g HGEMM_SUSTAIN=10 H $s 2 8 15 0 2 --json $OUT/r/rs-loop.json
done; done
M="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
SYMMEM_GEMM_TUNE=0 HGEMM_RS=1 HGEMM_GROUPS=4 HGEMM_SUSTAIN=1 timeout 150 ncu --clock-control none -k regex:"hopper_gemm_t_kernel" --launch-skip 2 -c 1 --csv --metrics $M \
  build/symmem-hgemm-probe 16384 4096 7168 2 8 3 0 2 > "$OUT/ncu-sum.csv" 2>&1; echo "== ncu kSum rc $?"
SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_SUSTAIN=1 timeout 150 ncu --clock-control none -k regex:"hopper_gemm_t_kernel" --launch-skip 2 -c 1 --csv --metrics $M \
  build/symmem-hgemm-probe 16384 4096 7168 2 8 3 0 2 > "$OUT/ncu-plain.csv" 2>&1; echo "== ncu plain rc $?"
for f in sum plain; do echo "-- $f"; grep -E '^"[0-9]' "$OUT/ncu-$f.csv" | awk -F'","' '{print $5 " | " $(NF-2) " | " $NF}' | cut -c1-200; done
cat "$OUT/ncu-sum.csv" "$OUT/ncu-plain.csv" > "$OUT/suite.log"
true
