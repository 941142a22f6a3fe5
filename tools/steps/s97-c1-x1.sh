# Session 97, call 1 (one GPU, ~300 s; run with WORK_TARGETS="symmem-run"): the three new Python
# random tests (the one-sided calls; MoE objects, shapes and call forms; the overlapped GEMMs on
# teams, remakes and kept graphs) at 2, 3, 4, 8 and 1 ranks on one GPU, each run bounded.
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s97-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
PYK py_rand97 110 'random_one_sided or random_moe or random_overlapped' 2 3 4 8 1
true
