# Steps for tools/call.sh on a 1-GPU machine (session 68, call 8): the dynamic schedule with its
# shared-memory words read and written as shared (call 7: the consumers' volatile reads through a
# generic pointer compiled to LD.E.STRONG.SYS and held 31% of their stall samples). Every GPU test
# but the fault ones at 1 rank (gpu_1rank's set), then the probe, static and dynamic in one
# rotation, after idle and back to back. ~3 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c8-x1.sh
FILTER="-Fault.*" TLIMIT=90 T 1 1
tests_passed || exit 0
for idle in 1000 0; do
  for s in "8192 7168 4096 2 8 15 0 2" "8192 4096 7168 2 8 15 0 0" "16384 7168 4096 2 8 15 0 2"; do
    PR dyn HGEMM_T_DYN=1 SYMMEM_BENCH_IDLE_US=$idle $s
  done
done
true
