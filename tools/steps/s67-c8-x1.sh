# Steps for tools/call.sh on a 1-GPU machine (session 67, call 8): does all_gather_matmul's own GEMM
# (hopper_gemm_t over 2 row shards, raster 8 by default: session 65's best at the cap) lose less at
# boost clocks in another raster? HGEMM_T_GROUP=g times it at raster g beside raster 8 in one
# rotation (with cuBLASLt's plan and hopper_gemm), after a near-idle millisecond and back to back,
# 8B ag M 8192 and 16384. ~2.5 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s67-c8-x1.sh
for idle in 1000 0; do
  for s in "8192 7168 4096" "16384 7168 4096"; do
    for g in 2 4 16; do
      PR t-raster SYMMEM_BENCH_IDLE_US=$idle HGEMM_T_GROUP=$g $s 2 8 15 0 2
    done
  done
done
true
