# Session 87, if a 2-GPU kind comes (one call, ~500 s with the build): the 2-GPU tiers owed since
# session 85 (2 and 3 ranks on 2 GPUs, the fault tier), gpu_1rank, the Python tier and every example
# at 2 GPUs (moe_layer and the MoE halves new), every C++ example (moe.cu new; all_reduce under
# torchrun), then moe_layer's time at 2 GPUs in fp8. Not the own-GEMM tiers (no GEMM code changed).
#   COMMIT=<sha> bash tools/call.sh tools/steps/s87-x2.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=430 SUITE12 "gpu_1rank|multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus|python_gpu_2gpus|python_example_.*_2gpus|^example_"
grep -E "^[0-9]+: (\[rank [0-9]\] )?rank [0-9] of|moe_layer:|tp_mlp:|PASSED$" "$OUT/suite.log" | head -16
PY=$(grep -m1 -E '^_?Python3_EXECUTABLE:' build/CMakeCache.txt | cut -d= -f2)
echo "== moe_layer fp8 at 2 GPUs, $(el) s"; PYTHONPATH=$PWD/build/python timeout 90 "$PY" tests/python/launch.py 2 $PWD/examples/python/moe_layer.py --fp8 2>&1 | grep -A4 "^moe_layer:"
true
