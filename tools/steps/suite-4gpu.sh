# Steps for tools/call.sh on a 4-GPU machine: the GPU suite at 1-4 ranks and 8 on 4 (ctest
# multigpu|gpu_1rank|python_gpu_4, stopped after 330 s), then symmem-bench overlap once and, time
# permitting, the Python overlap suite at TP = 4 (torchrun). ~8-9 min with the machine's start.
# Run: COMMIT=<sha> bash tools/call.sh tools/steps/suite-4gpu.sh (timeout 600; carry [".deps"]:
# googletest and the anchors, see docs/NOTES.md "Running on the device").
. tools/steps/ctest-4gpu.sh  # the suite (the steps share call.sh's helpers and $OUT)
[ $(el) -lt 500 ] && O overlap-tp4
[ $(el) -lt 480 ] && { PYTHONPATH=build/python timeout 80 torchrun --nproc-per-node=4 -m symmem.bench --suite overlap --kind $kind --out $OUT/r/py-overlap-tp4.json > $OUT/py.log 2>&1; echo "== python overlap rc $? at $(el) s"; tail -25 $OUT/py.log; }
true
