# Steps for tools/call.sh on a 2-GPU machine (session 67, call 2): where the overlap's extra time
# goes when each replay follows a near-idle millisecond (SYMMEM_BENCH_IDLE_US=1000: call 1 read 8B
# M 8192 mm+rs 1.118x and ag+mm 1.057x the GEMM there, against 1.035 / 1.008 replayed back to back).
# (1) SYMMEM_OVERLAP_PROBE=1 at 8B M 8192 both ways (back to back, then idle): the own GEMM alone,
# with the copies beside it, the fused form's GEMM looped back; (2) the own forms against the
# cuBLASLt ones (SYMMEM_OVERLAP_ALT=cublas) after idle, 8B and 70B, M 8192 and 16384, twins 2.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s67-c2-x2.sh
export SMI_LOG=1
for idle in 0 1000; do
  O probe-idle$idle SYMMEM_BENCH_IDLE_US=$idle SYMMEM_OVERLAP_PROBE=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192 | grep -E "^==|ag\\+mm|mm\\+rs|^# probe|GPU"
done
for idle in 1000 300; do
  O alt-idle$idle SYMMEM_BENCH_IDLE_US=$idle SYMMEM_OVERLAP_ALT=cublas SYMMEM_OVERLAP_TWINS=2 SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|GPU"
  TW alt-idle$idle
done
true
