# Session 92 (one GPU, ~300 s): ctest's new entries, the fault tests at 4 ranks on one GPU and the
# C++ examples at 4 ranks on it (session 91 ran both by hand at 3, 4 and 8 ranks), beside the
# examples' 2-rank entries and their torchrun entry.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s92-c1-x1.sh (carry [".deps/googletest", ".deps/anchors"])
SUITE_STOP_S=360 SUITE12 "multigpu_fault_4ranks_1gpu|multigpu_fault_2ranks_1gpu|^example_"
true
