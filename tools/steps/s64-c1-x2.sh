# Steps for tools/call.sh on a 2-GPU machine (session 64, call 1): the 70B mm+rs anomaly of session
# 63's call 5 (the default, transposed tiles with the straddle, 1.11-1.14x the GEMM alone on one
# machine, 1.008-1.052 on three others). Each form alone (SYMMEM_OVERLAP_OPS=rs, no alt column)
# under the clock log (SMI_LOG=1: each GPU's median SM clock and power over the run), the default
# and hopper_gemm's fused form (SYMMEM_OVERLAP_RS_GEMM_T=0), both orders; then each GPU alone looped
# back (HGEMM_RS=1 at M 16384: fused_t against fused) under the log. The machine's GPU UUIDs are in
# the call's nvidia-smi -L. ~5 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s64-c1-x2.sh
for order in "1 0" "0 1"; do for t in $order; do
  SMI_LOG=1 O rs70-t$t-$(echo $order | tr -d ' ') SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=8192,16384 \
    SYMMEM_OVERLAP_RS_GEMM_T=$t | grep -E "^==|mm\\+rs|GPU"
done; done
for d in 0 1; do
  SMI_LOG=1 smi_start loop$d
  HGEMM_RS=1 HGEMM_GROUPS=16 HGEMM_SUSTAIN=10 HGEMM_DEVICE=$d H 16384 8192 14336 2 2 15 0 2 --json $OUT/r/rs-loop$d.json
  smi_stop loop$d
done
true
