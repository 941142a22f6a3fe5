# Steps for tools/call.sh on a 2-GPU machine (session 63, call 5): the Python overlap suite at TP = 2
# on the session's code (symmem, torch.matmul alone, matmul + NCCL and PyTorch's fused ops,
# interleaved in one process; last run in session 35), after the package is built and the
# tensor-parallel example passes; then TP = 2's 70B mm+rs with the fused form in transposed tiles
# against hopper_gemm's (call 4's loopback: T 0.3-1.5% ahead at M 8192, 1.3% behind at M 16384
# without the straddle), both ways round: the alt column SYMMEM_OVERLAP_RS_GEMM_T=1 (M 8192 the
# comparison, M 16384 a control: both columns the same form) and =0 (the reverse). ~6 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s63-c5-x2.sh
COMMIT=$C tools/gpu_run.sh --no-bench --ctest-args "-R python_example_tp_mlp_2gpus" > $OUT/suite.log 2>&1
echo "== tp_mlp rc $? at $(el) s"; grep -E "tests passed|Total Test|^ *[0-9]+/[0-9]+ Test" $OUT/suite.log | tail -3
PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$C timeout 200 torchrun --nproc-per-node=2 -m symmem.bench --suite overlap --kind $kind \
  --out $OUT/r/py-overlap-tp2.json > $OUT/py.log 2>&1
echo "== python overlap rc $? at $(el) s"; grep -vE "^\[rank 1\]|Warning|warn" $OUT/py.log | tail -30
for first in 0 1; do for t in 1 0; do
  O ab-t$t-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_GEMM_T=$t" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs|alt"
done; done
cat $OUT/py.log >> $OUT/suite.log
true
