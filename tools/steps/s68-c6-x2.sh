# Steps for tools/call.sh on a 2-GPU machine (session 68's last call, the final code). (1)
# hopper_gemm_t's dynamic schedule as its own instantiation (kTPlainDyn; call 5 hung: its producer
# at 48 registers left the consumers' setmaxnreg.inc 232 short of the launch's registers): its test
# at 1 rank, then the probe, static and dynamic in one rotation, after idle and back to back; (2)
# the 1- and 2-GPU suite (as s67-c4-x2.sh), stopped after 250 s. ~8 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c6-x2.sh
FILTER="Overlap.TransposedGemmDynamic*" TLIMIT=60 T 1 1
if tests_passed; then
  for idle in 1000 0; do
    for s in "8192 7168 4096 2 8 15 0 2" "8192 4096 7168 2 8 15 0 0" "16384 7168 4096 2 8 15 0 2"; do
      PR dyn HGEMM_T_DYN=1 SYMMEM_BENCH_IDLE_US=$idle $s
    done
  done
else
  exit 0  # (the suite runs the same test on every rank: not worth its minutes then)
fi
SUITE12
true
