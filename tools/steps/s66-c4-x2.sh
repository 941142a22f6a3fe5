# Steps for tools/call.sh on a 2-GPU machine (session 66, call 4): SYMMEM_OVERLAP_QUIET_NS (new,
# rank-local): the own GEMMs' signal waits (all_gather_matmul's producers' shard waits, the fused
# sums' partial waits: kSumC's consumer leader, the ring-sum producer, hopper_gemm's) as relaxed
# polls ns apart and one acquire fence, against the default acquire polls. (1) The overlap GPU tests
# at 2 GPUs with QUIET_NS=500; (2) symmem-bench overlap at TP = 2, both models, M 8192 / 16384, both
# operations, QUIET_NS in the alt column (500, 2000), three instances a column, both ways round.
# ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s66-c4-x2.sh
FILTER='Overlap*' T 2 1 SYMMEM_OVERLAP_QUIET_NS=500
FILTER='Overlap*' T 1 1 SYMMEM_OVERLAP_QUIET_NS=500
if tests_passed; then
  for q in 500 2000; do
    for first in 0 1; do
      O q$q-first$first SYMMEM_OVERLAP_TWINS=3 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_QUIET_NS=$q SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|rror"
      TW q$q-first$first
    done
  done
fi
true
