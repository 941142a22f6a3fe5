# Session 94 (one GPU, ~500 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): the random MoE
# cases (Moe.RandomShapesRoutingAndCallForms: shapes, routings and call forms drawn from one seed,
# some with a second layer and an all-reduce between a dispatch and its combine) at 1, 2, 3, 4 and
# 8 ranks on the GPU, every Moe test (run_moe now takes a Variant) at 2 ranks, the fault tests at
# 4 (the store's change: a rank lost ends exchanges as before), the Python suite at 2 ranks (the
# new int64 / no-weights MoE test), then every Moe test at 8 ranks in what time is left.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s94-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
export SYMMEM_TIMEOUT_MS=100000
TLIMIT=40 MT 1 1
TLIMIT=60 MT 2 2
TLIMIT=60 MT 3 3
TLIMIT=70 MT 4 4
TLIMIT=100 MT 8 8
FILTER='Moe*' TLIMIT=80 T 2 2
FILTER='Fault.*' TLIMIT=90 T 4 4 -u SYMMEM_TIMEOUT_MS
PYBUILD
PYN python_gpu_2ranks_1gpu 2 100 test_gpu.py
FILTER='Moe*' TLIMIT=$((565 - $(el))) T 8 8
true
