# Steps for tools/call.sh on a 1-GPU machine (session 68, call 8): the dynamic schedule with its
# shared-memory words read and written as shared (call 7: the consumers' volatile reads through a
# generic pointer compiled to LD.E.STRONG.SYS and held 31% of their stall samples). Every GPU test
# but the fault ones at 1 rank (gpu_1rank's set), then the probe, static and dynamic in one
# rotation, after idle and back to back. ~3 minutes with the start.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c8-x1.sh
FILTER="-Fault.*" TLIMIT=90 T 1 1
tests_passed || exit 0
P() { echo "== probe $* at $(el) s"; env HGEMM_T=1 HGEMM_T_DYN=1 HGEMM_SUSTAIN=3 "$@" --json $OUT/r/dyn.json 2>&1 | grep -E "gemm_t|error|usage|bad|left" | sed 's/(worst rel err [^)]*)//; s/ (algo [^)]*)//; s/own_t\/cublasLt [0-9.]*, //'; }
for idle in 1000 0; do
  for s in "8192 7168 4096 2 8 15 0 2" "8192 4096 7168 2 8 15 0 0" "16384 7168 4096 2 8 15 0 2"; do
    P SYMMEM_BENCH_IDLE_US=$idle timeout 40 build/symmem-hgemm-probe $s
  done
done
true
