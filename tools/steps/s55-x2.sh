# Steps for tools/call.sh on a 2-GPU machine (session 55): the device API's remote atomics and the
# fault tests over NVLink (a GPU a rank: session 54 ran them with ranks sharing one GPU only),
# Overlap* at 2 GPUs (the epilogue ring's test included: at 2 ranks it moves what the fused form
# moves), the ring's tests at 4 ranks on 2 GPUs (2 a GPU: the GEMM leaves SMs for the pushes
# there), the p2p benchmark's remote atomic round trip, then TP = 2's matmul_reduce_scatter by the
# fused form against the default (the cuBLASLt ring). ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s55-x2.sh
FILTER="DeviceAtomics*:DeviceApi*:Stream*:Heap*" T 2 1
FILTER="Fault*" T 2 1
FILTER="Overlap*" T 2 1; grep -h "\[ring\]" $OUT/t.log | head -1
FILTER="Overlap.OwnGemmEpilogue*:Overlap.OwnGemmReduce*" TLIMIT=150 T 4 2 SYMMEM_OVERLAP_OWN_SHARED=1 SYMMEM_TIMEOUT_MS=100000; grep -h "\[ring\]" $OUT/t.log | head -1
timeout 60 build/bench/symmem-bench p2p --kind "$kind" --commit "$C" --json "$OUT/r/p2p.json" > "$OUT/p.log" 2>&1; echo "== p2p rc $? at $(el) s"; grep -iE "atomic|latency|^ *#" "$OUT/p.log" | head -8
[ "$(el)" -lt 420 ] && O fused SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT=own
rm -f "$OUT/p.log"
