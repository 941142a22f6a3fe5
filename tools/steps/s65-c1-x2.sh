# Steps for tools/call.sh on a 2-GPU machine (written in session 64 for session 65's first call
# where no 4-GPU kind is lent): the clock records' first GPU run (bench/clocks, built after session
# 64's last call): the host tests' BenchClocks.* (NVML sampled for 20 ms on this machine), then
# symmem-bench overlap at TP = 2, 70B, M 8192 / 16384, whose "#   ... clocks" lines should read
# ~1200-1500 MHz and ~690 W for every program; then the same with SYMMEM_BENCH_CLOCKS=0 beside it
# (the figures with and without the sampling thread: they should agree within a run's spread).
# ~3.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s65-c1-x2.sh   (carry [".deps"])
cmake --build build --target symmem_host_tests > $OUT/host-build.log 2>&1 && \
  build/tests/symmem_host_tests --gtest_filter='BenchClocks.*' 2>&1 | tail -4
O clocks SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|clocks"
O no-clocks SYMMEM_BENCH_CLOCKS=0 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|clocks"
true
