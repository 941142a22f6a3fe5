# Steps for tools/call.sh on a 1-GPU machine (session 68, call 4): hopper_gemm_t's dynamic schedule
# with the counter read a tile ahead (call 3: taken as each tile started, its atomic held the
# tile's first loads back: 2-5% slower than the static walk at 16384 rows and at the cap, 0.7-1%
# faster after idle at 8192, with 20% fewer L2 sectors). Its tests at 1 rank, then the probe as
# call 3 (static and dynamic in one rotation), and Nsight's counters of both. ~4 minutes.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c4-x1.sh
export SMI_LOG=1
FILTER="Overlap.TransposedGemmDynamic*:Overlap.OwnGemmRowShardsOnOneGpu" TLIMIT=200 T 1 1
tests_passed || exit 0
for idle in 1000 0; do
  smi_start idle$idle
  for s in "8192 7168 4096 2 8 15 0 2" "8192 4096 7168 2 8 15 0 2" "16384 7168 4096 2 8 15 0 2" "16384 4096 7168 2 8 15 0 2" "8192 4096 7168 2 8 15 0 0" "8192 14336 8192 2 8 9 0 2"; do
    PR dyn HGEMM_T_DYN=1 SYMMEM_BENCH_IDLE_US=$idle $s
  done
  smi_stop idle$idle
done
ms=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,dram__sectors_read.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
# (Since session 69 through call.sh's NM helper: the first line the static schedule, the second the dynamic one.)
for s in "8192 4096 7168" "16384 7168 4096"; do NCU_K=hopper_gemm_t NM "d-${s// /x}" "$ms" HGEMM_T_DYN=1 $s 2 8 2; done
true
