# Steps for tools/call.sh on a 1-GPU machine (session 70, call 6): the first GPU run of session
# 69's probe changes (the optional variants indexed where they are added; the idle knob through
# bench::idle_ns_from_env): the probe over 2 row shards after idle and back to back, with and
# without the dynamic schedule (one more variant), then Nsight's metrics summary. ~3 minutes.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s70-c6-x1.sh
for idle in 1000 0; do
  PR static SYMMEM_BENCH_IDLE_US=$idle 8192 4096 7168 2 8 15 0 2
  PR dyn SYMMEM_BENCH_IDLE_US=$idle HGEMM_T_DYN=1 8192 4096 7168 2 8 15 0 2
done
PR badidle SYMMEM_BENCH_IDLE_US=banana 8192 4096 7168 2 8 15 0 2
export NCU_K=hopper_gemm_t
NM m8k gpu__time_duration.sum,sm__cycles_elapsed.max HGEMM_SUSTAIN=0 HGEMM_T_DYN=1 8192 4096 7168 2 8 2
true
