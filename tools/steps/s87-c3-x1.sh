# Session 87 (one GPU, ~260 s): the final code's changed GPU paths: every example's ctest entry
# (examples/moe.cu new, all_reduce under torchrun, moe_layer at 2 ranks on one GPU), the Python tier
# at 2 ranks on one GPU (captured() now serves its graph tests; the MoE halves), then examples/moe at
# 4 and 8 ranks on the GPU by symmem-run.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s87-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=330 SUITE12 "example_|python_gpu_2ranks_1gpu|python_host"
grep -E "^[0-9]+: (\[rank [0-9]\] )?rank [0-9] of|moe_layer:|PASSED$" "$OUT/suite.log" | head -12
for n in 4 8; do echo "== examples/moe at $n ranks on the GPU, $(el) s"; SYMMEM_TIMEOUT_MS=100000 timeout 120 build/symmem-run -n $n --ranks-per-gpu $n build/examples/moe 2>&1 | tail -$n; echo "rc ${PIPESTATUS[0]}"; done
true
