# Steps for tools/call.sh on a 1-GPU machine (session 55): the epilogue ring rebuilt on the own
# GEMM. First the looped-back ceilings of the fused form and the ring against cuBLASLt's whole GEMM
# (symmem-hgemm-probe HGEMM_RS=1; TP = 4's 8B and 70B mm+rs shapes and TP = 2's 8B), then the
# Overlap tests at 1 rank and the own GEMM's at 2, 3 and 4 ranks sharing the GPU (the ring differs
# from the fused form from 3 ranks on). ~6 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s55-ring-x1.sh
P() { echo "== probe $* at $(el) s"; env HGEMM_RS=1 HGEMM_SUSTAIN=10 "$@" 2>&1 | grep -E "rs forms|error|usage" ; }
P HGEMM_GROUPS=4 build/symmem-hgemm-probe 8192 4096 3584 2 2 20 0 4 --json $OUT/r/probe.json
P HGEMM_GROUPS=8 build/symmem-hgemm-probe 16384 4096 3584 2 2 20 0 4 --json $OUT/r/probe.json
P HGEMM_GROUPS=4 build/symmem-hgemm-probe 8192 8192 7168 2 2 20 0 4 --json $OUT/r/probe.json
P HGEMM_GROUPS=4 build/symmem-hgemm-probe 8192 4096 3584 2 2 20 0 4 --json $OUT/r/probe.json
P HGEMM_GROUPS=4 build/symmem-hgemm-probe 8192 4096 7168 2 2 20 0 2 --json $OUT/r/probe.json
FILTER="Overlap*" T 1 1; grep -h "\[ring\]" $OUT/t.log | head -1
FILTER="Overlap.OwnGemm*:Overlap.Knobs*" T 2 2 SYMMEM_OVERLAP_OWN_SHARED=1; grep -h "\[ring\]" $OUT/t.log | head -1
FILTER="Overlap.OwnGemm*Reduce*:Overlap.OwnGemmEpilogue*" TLIMIT=130 T 3 3 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=60000; grep -h "\[ring\]" $OUT/t.log | head -1
[ "$(el)" -lt 400 ] && FILTER="Overlap.OwnGemmEpilogue*" TLIMIT=120 T 4 4 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=60000; grep -h "\[ring\]" $OUT/t.log | head -1
