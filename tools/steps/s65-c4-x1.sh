# Steps for tools/call.sh on a 1-GPU machine (session 65, calls 4 and 5: call 5 with each round in its own order): all_gather_matmul's own GEMM
# (hopper_gemm_t over 2 row shards, as at TP = 2) at raster 8 (its default) and 2 looped back, the
# two replayed in turn with cuBLASLt's plan and hopper_gemm (symmem-hgemm-probe HGEMM_T_GROUP, new):
# the operation's A/B (calls 2-3) moves by +-2% a run; here both rasters share one power state.
# Each shape both ways round (the default's raster first, then the other's); 70B M 16384 also at 4.
# ~3 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s65-c4-x1.sh
P() { echo "== probe $* at $(el) s"; env HGEMM_T=1 HGEMM_SUSTAIN=10 "$@" --json $OUT/r/ag-raster.json 2>&1 | grep -E "gemm_t|error|usage|bad"; }
for s in "16384 14336 8192" "8192 14336 8192" "16384 7168 4096" "8192 7168 4096"; do
  P HGEMM_T_GROUP=2 build/symmem-hgemm-probe $s 2 8 15 0 2
  P HGEMM_T_GROUP=8 build/symmem-hgemm-probe $s 2 2 15 0 2
done
P HGEMM_T_GROUP=4 build/symmem-hgemm-probe 16384 14336 8192 2 8 15 0 2
P HGEMM_T_GROUP=8 build/symmem-hgemm-probe 16384 14336 8192 2 4 15 0 2
true
