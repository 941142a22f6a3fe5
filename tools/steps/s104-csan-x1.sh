# What compute-sanitizer has not reached in symmem's kernels (sessions 102-103; one GPU, 1 rank, the
# -lineinfo build, two calls, the second on the warm machine): racecheck (shared-memory hazards)
# and synccheck (barriers and mbarriers) of the own GEMM's transposed and reduce-scatter forms,
# its epilogue rings and dynamic schedule, the random overlap cases, and MoE's small rounds,
# streamed and pipelined forms. In session 103 the first test of each such run took over 100 s
# under the tool, so each run here has up to 200 s. cuBLASLt's kernels stay in (excluding them broke
# racecheck in session 103); its WAR lines in `nvjet_*` are cuBLASLt's (csan.sh's counted lines
# name the kernel). What to read: "RACECHECK SUMMARY: 0 hazards" or hazards in nvjet alone,
# "ERROR SUMMARY: 0 errors" from synccheck; a hazard in a symmem kernel is a finding.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo PART=1 bash tools/call.sh tools/steps/s104-csan-x1.sh
#   (then at once, warm) the same with PART=2
. tools/steps/csan.sh
own_t='Overlap.OwnGemmTransposedAllGather*:Overlap.OwnGemmTransposedReduce*:Overlap.OwnGemmReduceScatterMatchesTheReference'
own_r='Overlap.OwnGemmEpilogue*:Overlap.TransposedGemmDynamicScheduleOnOneGpu:Overlap.EpilogueRingOfVirtualRanksOnOneGpu'
if [ "${PART:-1}" = 1 ]; then
  t=$(L 200) && CS racecheck 1 "$own_t:$own_r" $t --racecheck-report hazard
  t=$(L 200) && CS synccheck 1 "$own_t" $t
else
  t=$(L 150) && CS synccheck 1 "$own_r:Overlap.RandomShapesFormsAndCallOrders" $t
  t=$(L 200) && CS racecheck 1 'Moe.SmallRoundsTravelAsLines:Moe.Streamed*:Moe.Pipelined*:Moe.RandomShapesRoutingAndCallForms' $t --racecheck-report hazard
  t=$(L 150) && CS synccheck 1 'Moe.SmallRoundsTravelAsLines:Moe.Streamed*:Moe.Pipelined*' $t
fi
true
