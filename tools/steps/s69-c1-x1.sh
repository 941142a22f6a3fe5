# Steps for tools/call.sh on a 1-GPU machine (session 69, call 1). hopper_gemm_t's dynamic schedule
# with its producer at 40 registers and its consumers at 232, as the static kernels (its producer
# state and next tile's words in shared memory; it spilled at 40 before), against session 68's
# (56 / 224, .deps/ab/0cb02b4's probe); and with every tile 160 rows (HGEMM_T_DYN_TALL=1000: a
# dynamic walk needs no static balance). Every GPU test but the fault ones at 1 rank first (the
# shared GEMM reference, device::mbar_wait's scope), then the probe after idle and at the cap, then
# Nsight's stall samples of the static and new dynamic kernels. ~6 minutes with the start.
#   tools/ab.sh prepare 0cb02b4
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe AB_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s69-c1-x1.sh
export SMI_LOG=1
FILTER="-Fault.*" TLIMIT=120 T 1 1
tests_passed || exit 0
old=.deps/ab/0cb02b4/build-ab/symmem-hgemm-probe
OLD() { local label=$1; shift; split_env "$@"; echo "== old probe $label ${ENVS[*]} ${ARGS[*]}";
  env HGEMM_T=1 HGEMM_T_DYN=1 HGEMM_SUSTAIN=3 "${ENVS[@]}" timeout 100 "$old" "${ARGS[@]}" --json "$OUT/r/probe-$label.json" 2>&1 |
    grep -E "gemm_t|error|bad" | sed 's/(worst rel err [^)]*)//; s/ (algo [^)]*)//'; }
for idle in 1000 0; do
  smi_start idle$idle
  for s in "8192 7168 4096 2 8 15 0 2" "8192 4096 7168 2 8 15 0 2" "16384 7168 4096 2 8 15 0 2"; do
    PR new SYMMEM_BENCH_IDLE_US=$idle HGEMM_T_DYN=1 $s
    OLD old SYMMEM_BENCH_IDLE_US=$idle $s
    PR tall SYMMEM_BENCH_IDLE_US=$idle HGEMM_T_DYN=1 HGEMM_T_DYN_TALL=1000 $s
  done
  smi_stop idle$idle
done
export NCU_K=hopper_gemm_t  # (its two check launches: the static kernel, then the dynamic one)
NSRC src HGEMM_SUSTAIN=0 HGEMM_T_DYN=1 16384 7168 4096 2 8 2
ms=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__sectors_read.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
NM m8k "$ms" HGEMM_SUSTAIN=0 HGEMM_T_DYN=1 8192 4096 7168 2 8 2
true
