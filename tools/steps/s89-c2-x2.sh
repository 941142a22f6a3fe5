# Session 89, 2 GPUs, ~420 s: the pair form of all_to_all_v with its lines spread over the grid
# (tools/steps/s86-a2av-spread.patch in .deps/ab/a2av-spread) against main, alternating, twice, at
# every size; that tree's collective tests at 2 ranks on 2 GPUs, 3 on 2 and with the debug checks
# (so it can land from this call); then main's 4-rank own-GEMM tier and the README's main job.
#   AB_TARGETS="symmem_gpu_tests symmem-run" COMMIT=<sha> bash tools/call.sh tools/steps/s89-c2-x2.sh (carry [".deps"])
AAB a2av "a2av-spread" all_to_all_v -b 8 -e 1M -f 2 -n 100
for r in "2 2" "3 2" "2 1"; do BIN=a2av-spread FILTER="Collectives.*:Collectives/*" T $r; done
BIN=a2av-spread FILTER="DebugChecks.*:Collectives/*" T 2 2 SYMMEM_DEBUG_CHECKS=1
cat "$OUT/summary.txt"
SUITE_STOP_S=300 SUITE12 "multigpu_own_gemm_4ranks_2gpus"
grep -E "Test +#|PASSED" "$OUT/suite.log" | head
MAINJOB 560
true
