# Session 87 (one GPU, ~300 s): the new examples/python/moe_layer.py at 2 ranks on one GPU (its
# ctest entry, fp8 dispatch), symmem's bootstrap under torchrun (the agent holds MASTER_PORT: the
# C++ example by torchrun --no-python, symmem.init() without torch.distributed), the host and Python
# tiers (SUITE_REGEX: fewer); then the example by hand in bf16, at 1 rank, at H 2000 (a partial last scale group), at 4
# ranks on the GPU.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s87-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=330 SUITE12 "${SUITE_REGEX:-^host$|python_host|example_all_reduce|python_example_moe_layer_2ranks_1gpu|python_gpu_2ranks_1gpu}"
grep -A6 "^[0-9]*: moe_layer:" "$OUT/suite.log" | head -8
PY=$(grep -m1 -E '^_?Python3_EXECUTABLE:' build/CMakeCache.txt | cut -d= -f2)
echo "python: $PY"; PYTHONPATH=$PWD/build/python "$PY" -m torch.distributed.run --nproc-per-node=1 --no-python env | grep -E "^TORCHELASTIC_USE_AGENT_STORE|^MASTER_PORT"
ex() { echo "== moe_layer $* at $(el) s"; PYTHONPATH=$PWD/build/python timeout 150 "$PY" tests/python/launch.py "$@" 2>&1 | grep -vE "^W[0-9]|^\*+$|OMP_NUM" | tail -6; echo "rc ${PIPESTATUS[0]}"; }
ex 2 --ranks-per-gpu 2 $PWD/examples/python/moe_layer.py
ex 1 $PWD/examples/python/moe_layer.py --fp8
ex 2 --ranks-per-gpu 2 $PWD/examples/python/moe_layer.py --fp8 --hidden 2000 --experts 32 --topk 8 --tokens 64
ex 4 --ranks-per-gpu 4 $PWD/examples/python/moe_layer.py --tokens 32
true
