# Session 88, call 1 (one GPU, ~350 s): the library's kernels now say which architecture their code
# came from (runtime/device_code.hpp): PDL, the stream put's bulk copy and the MoE ring's bulk copy
# follow it, and Context refuses a GPU the build has no code for. On the default build (sm_90 code)
# nothing changes: the 1-GPU tiers that run every kernel family (gpu_1rank, 2 ranks on the GPU,
# debug checks, the Python tier and the C++ examples), then SYMMEM_DEBUG=WARN on an example (no
# warning expected).
#   COMMIT=<sha> bash tools/call.sh tools/steps/s88-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=380 SUITE12 "${SUITE_REGEX:-gpu_1rank|multigpu_2ranks_1gpu|multigpu_debug_checks_2ranks_1gpu|python_gpu_2ranks_1gpu|^example_moe$}"
echo "== SYMMEM_DEBUG=WARN examples/moe at $(el) s"
SYMMEM_DEBUG=WARN timeout 60 build/symmem-run -n 2 --ranks-per-gpu 2 build/examples/moe 2>&1 | tail -4
true
