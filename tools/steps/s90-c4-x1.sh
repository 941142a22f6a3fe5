# Session 90 (one GPU, ~350 s): ctest's new python_gpu_4ranks_1gpu entry (the Python suite at 4
# ranks on one GPU) and the MoE layer example at 2 ranks on it (session 89's call 3 stopped before it).
#   COMMIT=<sha> bash tools/call.sh tools/steps/s90-c4-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=420 SUITE12 "python_gpu_4ranks_1gpu|python_example_moe_layer_2ranks_1gpu"
true
