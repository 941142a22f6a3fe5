# Session 98, call 2 (one GPU, ~520 s; run with WORK_TARGETS="symmem_gpu_tests symmem-run"): an
# all_to_all_v output may be null where out_count is 0 (its C++ case at 1-4 ranks on one GPU), and
# the debug checks no longer compare all_to_all_v's outputs across ranks (DebugChecks.* and the
# AllToAllV tests at 2 ranks with SYMMEM_DEBUG_CHECKS=1); the two new random Python tests
# (all_to_all_v from Python; new_group from ranks, torch groups and meshes) at 2, 3, 4, 8 and 1
# ranks on one GPU, all_to_all_v's at 3 with the debug checks; then the Python suite at 4 ranks.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" bash tools/call.sh tools/steps/s98-c2-x1.sh (carry [".deps/googletest", ".deps/anchors"])
PYBUILD
export SYMMEM_TIMEOUT_MS=10000
for nr in 2 4 1 3; do t=$(L 60) && TLIMIT=$t FILTER='*AllToAllV*' T $nr $nr; done
t=$(L 60) && TLIMIT=$t FILTER='*AllToAllV*:DebugChecks.*' T 2 2 SYMMEM_DEBUG_CHECKS=1
PYK py_new98 90 'random_all_to_all_v or random_groups' 2 3 4 8 1
export SYMMEM_DEBUG_CHECKS=1
PYK py_dbg98 60 'random_all_to_all_v' 3
unset SYMMEM_DEBUG_CHECKS
export SYMMEM_TIMEOUT_MS=30000
t=$(L 150) && PYN python_gpu_4ranks_1gpu 4 $t test_gpu.py
true
