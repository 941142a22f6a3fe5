# Session 90 (one GPU, ~560 s): the suites that had not run at 8 ranks since session 45 (session
# 86 ran Moe* and the collective filters at 8 ranks on one GPU): the context, device API, atomics,
# heap, random, stream and thread tests, the debug checks' refusals (arguments unlike across 8
# ranks, raised on every rank), then the overlap tests with what time is left. Eight ranks
# time-slicing one GPU can starve a waiting rank (session 50): the longer bound.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s90-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
FILTER='ContextSetup.*:DeviceApi.*:DeviceAtomics.*:Heap.*:Random.*:Stream.*:Threads.*' TLIMIT=150 T 8 8 SYMMEM_TIMEOUT_MS=100000
FILTER='DebugChecks.*' TLIMIT=90 T 8 8 SYMMEM_DEBUG_CHECKS=1 SYMMEM_TIMEOUT_MS=100000
FILTER='Overlap.*' TLIMIT=$((565 - $(el))) T 8 8 SYMMEM_TIMEOUT_MS=100000
true
