# Steps for tools/call.sh on a 1-GPU machine (session 55's last code): every test at 1 rank and at 2
# ranks on the GPU, the fault tests at 2, the own GEMM's reduce-scatter tests at 3 ranks on the GPU
# (the case that hung before the GEMM left SMs for the copies), and the own GEMM's weak shape at
# raster groups 2-16. ~7 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s55-final-x1.sh
FILTER="-Fault*" T 1 1
FILTER="-Fault*" T 2 2
FILTER="Fault*" T 2 2
FILTER="Overlap.OwnGemmEpilogue*" TLIMIT=240 T 3 3 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=200000; grep -h "\[ring\]" $OUT/t.log | head -1
for g in 2 4 8 16; do HGEMM_SUSTAIN=10 build/symmem-hgemm-probe 16384 4096 3584 2 $g 20 --json $OUT/r/weak.json 2>&1 | grep -E "^gemm"; done
true
