# The GPU binary's host code under AddressSanitizer and UBSan (one GPU, 2 ranks; ~300 s with the
# start). Session 101 ran the host tests under ASan/UBSan and TSan (-DSYMMEM_SANITIZE=...; TSan
# found error_rank's race); this runs the runtime's GPU-side host paths (the heap's maps and fd
# exchange, the communicator, the stream API, MoE and overlap set-up) the same way. CUDA under ASan
# needs protect_shadow_gap=0; leaks are not checked (the driver's own allocations).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DSYMMEM_SANITIZE=address bash tools/call.sh tools/steps/s101-asan-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 SYMMEM_TIMEOUT_MS=30000
san() { grep -a "runtime error\|ERROR: AddressSanitizer\|SUMMARY: \|#[0-9] 0x.* in symmem" "$OUT/t.log" | sed -E 's/^\[rank [0-9]+\] //' | sort | uniq -c | sort -rn | cut -c1-300 | head -12; }
grep -c "fsanitize=address" build/build.ninja | sed 's/^/== ninja lines with -fsanitize=address: /'
t=$(L 80) && FILTER='Heap.*:ContextSetup.*:Collectives.*:Stream.*:Threads.*:DeviceApi.*' TLIMIT=$t T 2 2
san
t=$(L 55) && FILTER='Moe.DispatchCombineBf16:Moe.ReplayedInACudaGraph:Moe.OverCapacityOnOneRankIsReportedOnEveryRank:Overlap.GemmsWithCommunicationMatchTheReference:DebugChecks.*:Fault.*' TLIMIT=$t T 2 2
san
true
