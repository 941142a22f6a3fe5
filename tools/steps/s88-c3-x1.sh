# Session 88, call 3 (one GPU, ~480 s): the final code. The 1-GPU tiers call 1 did not run (the
# fault tier, the own GEMM's forms at 2 ranks on the GPU), gpu_1rank again, the examples, the host
# tier and the new pre_hopper_build; then a build with code for sm_80 alone (80-real: nothing the
# H200 can run) to see Context refuse the GPU by name on both ranks of the all_reduce example.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s88-c3-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=300 SUITE12 "${SUITE_REGEX:-^host$|pre_hopper_build|gpu_1rank|multigpu_fault_2ranks_1gpu|multigpu_own_gemm_2ranks_1gpu|^example_|python_example_moe_layer_2ranks_1gpu}"
if [ "$(el)" -lt 470 ]; then
  B80=$PWD/build80r
  cmake -S . -B "$B80" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_BUILD_TESTS=OFF -DSYMMEM_BUILD_PYTHON=OFF -DSYMMEM_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=80-real > "$OUT/build80r.log" 2>&1 &&
    timeout $(( 560 - $(el) )) cmake --build "$B80" -j "$(nproc)" --target symmem-run all_reduce >> "$OUT/build80r.log" 2>&1
  echo "== built80r rc $? at $(el) s"
  [ -x "$B80/examples/all_reduce" ] && timeout 60 "$B80/symmem-run" -n 2 --ranks-per-gpu 2 "$B80/examples/all_reduce" 2>&1 | tail -6
fi
true
