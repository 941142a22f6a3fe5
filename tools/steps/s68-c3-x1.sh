# Steps for tools/call.sh on a 1-GPU machine (session 68, call 3): hopper_gemm_t's dynamic schedule
# (HopperGemmOptions::tile_counter; call 2: cuBLASLt's tile 24 takes its tiles from an atomic
# counter and has 26 M of its 117 M L2 request sectors coalesced in the L2 request coalescer,
# the own GEMMs 4-7 M). (1) Its GPU test and the row-shard tests at 1 rank; (2) symmem-hgemm-probe
# with HGEMM_T_DYN=1 (static and dynamic in one rotation with cuBLASLt and hopper_gemm) at TP = 2's
# 8B shapes, whole and over 2 shards, rasters 8 and 1, after idle and back to back; (3) Nsight
# Compute's L2 and coalescer counters of both schedules at 8192 x 4096 x 7168. ~5 minutes.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c3-x1.sh
export SMI_LOG=1
FILTER="Overlap.TransposedGemmDynamic*:Overlap.OwnGemmRowShardsOnOneGpu:Overlap.EpilogueRing*" TLIMIT=200 T 1 1
tests_passed || exit 0
for idle in 1000 0; do
  smi_start idle$idle
  for s in "8192 7168 4096" "8192 4096 7168" "16384 7168 4096" "16384 4096 7168"; do
    for sh in 2 0; do PR dyn HGEMM_T_DYN=1 SYMMEM_BENCH_IDLE_US=$idle $s 2 8 15 0 $sh; done
  done
  PR dyn HGEMM_T_DYN=1 SYMMEM_BENCH_IDLE_US=$idle 8192 7168 4096 2 1 15 0 2
  smi_stop idle$idle
done
ms=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,l1tex__m_xbar2l1tex_read_sectors.sum,dram__sectors_read.sum,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
# (Since session 69 through call.sh's NM helper: the first line the static schedule, the second the dynamic one.)
for g in 8 1; do NCU_K=hopper_gemm_t NM "d$g" "$ms" HGEMM_T_DYN=1 8192 4096 7168 2 $g 2; done
true
