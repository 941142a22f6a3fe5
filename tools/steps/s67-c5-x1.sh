# Steps for tools/call.sh on a 1-GPU machine (session 67, call 5): hopper_gemm_t against hopper_gemm
# and cuBLASLt's plan over 2 row shards (TP = 2's GEMMs), graphs of 3 replayed in turn, back to
# back and after a near-idle millisecond (SYMMEM_BENCH_IDLE_US=1000, which the probes now take):
# session 67 found the transposed tiles level at the cap and 4.6% behind hopper_gemm at boost
# clocks in 8B mm+rs's fused form. Where else, and by how much? ~3 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s67-c5-x1.sh
export SMI_LOG=1
for idle in 1000 0; do
  smi_start idle$idle
  for s in "8192 7168 4096" "8192 4096 7168" "16384 7168 4096" "16384 4096 7168" "8192 14336 8192" "8192 8192 14336"; do
    PR t-idle SYMMEM_BENCH_IDLE_US=$idle $s 2 8 15 0 2
  done
  smi_stop idle$idle
done
true
