# Steps for tools/call.sh on a 2-GPU machine (session 55's last code): every test at 1 rank and at 2
# GPUs, the fault tests at 2 GPUs, the own GEMM's reduce-scatter tests at 4 ranks on 2 GPUs, the
# overlap benchmark at M 8192 / 16384 (70B's mm+rs now the fused form at TP = 2), and the own
# GEMM's weak shape (16384 x 4096 x 3584) at raster groups 2-16. ~5 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s55-final-x2.sh
FILTER="-Fault*" T 1 1
FILTER="-Fault*" T 2 1
FILTER="Fault*" T 2 1
FILTER="Overlap.OwnGemm*:Overlap.EpilogueRing*" TLIMIT=120 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000; grep -h "\[ring\]" $OUT/t.log | head -1
O final SYMMEM_OVERLAP_M=8192,16384
for g in 2 4 8 16; do HGEMM_SUSTAIN=10 build/symmem-hgemm-probe 16384 4096 3584 2 $g 20 --json $OUT/r/weak.json 2>&1 | grep -E "^gemm"; done
true
