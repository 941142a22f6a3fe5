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
P() { echo "== probe $* at $(el) s"; env HGEMM_T=1 HGEMM_T_DYN=1 HGEMM_SUSTAIN=3 "$@" --json $OUT/r/dyn.json 2>&1 | grep -E "gemm_t|error|usage|bad|left" | sed 's/(worst rel err [^)]*)//; s/ (algo [^)]*)//'; }
for idle in 1000 0; do
  smi_start idle$idle
  for s in "8192 7168 4096" "8192 4096 7168" "16384 7168 4096" "16384 4096 7168"; do
    for sh in 2 0; do P SYMMEM_BENCH_IDLE_US=$idle build/symmem-hgemm-probe $s 2 8 15 0 $sh; done
  done
  P SYMMEM_BENCH_IDLE_US=$idle build/symmem-hgemm-probe 8192 7168 4096 2 1 15 0 2
  smi_stop idle$idle
done
ms=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,l1tex__m_xbar2l1tex_read_sectors.sum,dram__sectors_read.sum,lrc__request_sectors_op_read_coalescable.sum,lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum
export SYMMEM_GEMM_TUNE=0 HGEMM_T=1 HGEMM_T_DYN=1 HGEMM_SUSTAIN=1
for g in 8 1; do
  timeout 100 ncu --clock-control none -k regex:"hopper_gemm_t" --launch-skip 0 -c 2 --metrics "$ms" -o "$OUT/d$g" -f \
    build/symmem-hgemm-probe 8192 4096 7168 2 $g 2 > "$OUT/ncu-d$g.log" 2>&1
  echo "== ncu group $g rc $? at $(el) s"
  ncu -i "$OUT/d$g.ncu-rep" --page raw --csv --metrics "$ms" > "$OUT/r/ncu-d$g.csv" 2>&1
  echo "  (the first line: the static schedule; the second: the dynamic one)"
  python3 - "$OUT/r/ncu-d$g.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = rows[0]
for r in rows[2:]:
    d = {h: r[i] for i, h in enumerate(hdr)}
    f = lambda k: float(d[k].replace(",", ""))
    print("  %-40s L2 %6.1fM hwcoal %5.1fM fabric %5.1fM dram %5.1fM cyc %.0fK clk %.3f us %.1f" % (d["Kernel Name"][:40],
          f("lts__t_sectors_srcunit_tex_op_read.sum") / 1e6, f("lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum") / 1e6,
          f("lts__t_sectors_srcunit_ltcfabric.sum") / 1e6, f("dram__sectors_read.sum") / 1e6, f("sm__cycles_elapsed.max") / 1e3,
          f("sm__cycles_elapsed.avg.per_second"), f("gpu__time_duration.sum")))
PY
done
true
