# Session 87 (one GPU, ~250 s): the Python MoE halves (ExpertParallel.dispatch_send / dispatch_recv /
# combine_send / combine_recv, new) in the Python tier at 2 ranks on one GPU, and
# examples/python/moe_layer.py, which now runs its shared expert between dispatch's halves: its ctest
# entry (fp8), then by hand in bf16 and at H 2000 (a partial last scale group), and the C++ example
# under torchrun.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s87-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=330 SUITE12 "python_gpu_2ranks_1gpu|python_example_moe_layer_2ranks_1gpu|example_all_reduce_torchrun"
grep -E "halves|FAILED|Error" "$OUT/suite.log" | head -20
grep -A4 "^[0-9]*: moe_layer:" "$OUT/suite.log" | head -6
PY=$(grep -m1 -E '^_?Python3_EXECUTABLE:' build/CMakeCache.txt | cut -d= -f2)
ex() { echo "== moe_layer $* at $(el) s"; PYTHONPATH=$PWD/build/python timeout 150 "$PY" tests/python/launch.py "$@" 2>&1 | grep -vE "^W[0-9]|^\*+$|OMP_NUM" | tail -6; echo "rc ${PIPESTATUS[0]}"; }
ex 2 --ranks-per-gpu 2 $PWD/examples/python/moe_layer.py
ex 2 --ranks-per-gpu 2 $PWD/examples/python/moe_layer.py --fp8 --hidden 2000 --experts 32 --topk 8 --tokens 64
true
