# Session 97, call 4 (one GPU, ~330 s, for a budget of ~380 s after four starts that found no
# machine; run with WORK_TARGETS="symmem-run"): s97-c3-x1.sh cut to fit: every random Python test
# at 3 and 8 ranks, then the whole Python suite at 4 ranks (each run bounded to end by ~340 s).
#   COMMIT=<sha> WORK_TARGETS="symmem-run" bash tools/call.sh tools/steps/s97-c4-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
PYK py_rand97 50 'random' 3 8
export SYMMEM_TIMEOUT_MS=30000
t=$(L $((340 - $(el)))) && PYN python_gpu_4ranks_1gpu 4 $t test_gpu.py
true
