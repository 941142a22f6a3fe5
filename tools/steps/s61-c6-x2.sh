# Steps for tools/call.sh on a 2-GPU machine (session 61, call 6): where 8B mm+rs M 16384's ~5.5%
# goes with hopper_gemm_t's new k-loop. symmem-bench overlap's probe (SYMMEM_OVERLAP_PROBE=1, the
# fused form in transposed tiles, as it runs by default at 8B): the fused GEMM in the fused order
# with neither counts nor sum (t_order_no_counts: the shards' walk), counting, summing, with the
# copies beside, without the barrier, interleaved with the floor and the operation; then
# hopper_gemm_t alone over the whole 16384 rows (the probe, no shards); the SASS of the final
# cubins (S, after tools/cubins.sh final). ~4 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s61-c6-x2.sh
S
O probe-t SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=16384 | grep -E "^==|mm\\+rs|# probe"
HGEMM_T=1 PB build/symmem-hgemm-probe plain 16384 4096 7168 2 2 10
HGEMM_T=1 PB build/symmem-hgemm-probe plain-g8 16384 4096 7168 2 8 10
true
