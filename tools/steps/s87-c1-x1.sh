# Session 87 (one GPU, ~250 s): the new examples/python/moe_layer.py at 2 ranks on one GPU (its
# ctest entry, fp8 dispatch), then by hand in bf16, at 1 rank, and at H 2000 (a partial last scale
# group), and the Python tier at 2 ranks on one GPU beside it.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s87-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=300 SUITE12 "python_example_moe_layer_2ranks_1gpu|python_gpu_2ranks_1gpu"
grep -A6 "^moe_layer:" "$OUT/suite.log" | head -8
PY=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' build/CMakeCache.txt)
ex() { echo "== moe_layer $* at $(el) s"; PYTHONPATH=$PWD/build/python timeout 120 "$PY" tests/python/launch.py "$@" 2>&1 | grep -vE "^W[0-9]|^\*+$|OMP_NUM" | tail -6; echo "rc ${PIPESTATUS[0]}"; }
ex 2 --ranks-per-gpu 2 examples/python/moe_layer.py
ex 1 examples/python/moe_layer.py --fp8
ex 2 --ranks-per-gpu 2 examples/python/moe_layer.py --fp8 --hidden 2000 --experts 32 --topk 8 --tokens 64
ex 4 --ranks-per-gpu 4 examples/python/moe_layer.py --tokens 32
true
