# Session 97, call 5 (one GPU, ~270 s, for a budget of ~290 s after six starts that found no
# machine; run with WORK_TARGETS="symmem-run"): every random Python test at 3 and 8 ranks on the
# session's final code, each run bounded to end by ~260 s.
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s97-c5-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
PYK py_rand97 $(( (260 - $(el)) / 2 )) 'random' 3 8
true
