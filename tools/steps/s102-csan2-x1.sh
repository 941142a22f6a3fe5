# compute-sanitizer, what session 102 left (one GPU; best on the still-warm machine s102-csan-x1.sh
# left, whose -lineinfo build it reuses): racecheck (shared-memory hazards: the own GEMMs' stage
# rings, MoE's routing counts) and synccheck (barriers used unlike across a block's threads,
# mbarriers) at 1 rank on what session 102's runs did not reach, initcheck (global memory read
# before any write; at 1 rank only: another process's writes into a peer mapping are invisible to
# this process's sanitizer; never run yet), and memcheck on the suites it
# missed (all_to_all_v: its suite is Collectives/AllToAllV, which 'AllToAllV.*' and
# 'Collectives.*' do not select; the fault and debug-check tests). cuBLASLt's kernels (nvjet_*)
# are left out of racecheck: it reports WAR hazards in them that it cannot judge (their stage
# ring's asynchronous copies and wgmma). Times seen in session 102 under memcheck at
# 1 rank: Moe.SmallRoundsTravelAsLines 65 s, Collectives.AllReduceEveryTypeOpAlgorithmAndTail 25 s;
# under racecheck Overlap.GemmsWithCommunicationMatchTheReference 88 s (cuBLASLt's GEMMs).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo bash tools/call.sh tools/steps/s102-csan2-x1.sh
. tools/steps/csan.sh
skip="--kernel-name-exclude kns=nvjet"  # (the syntax is untried here)
t=$(L 60) && SYMMEM_DEBUG_CHECKS=1 CS memcheck 2 'Collectives/AllToAllV*:DebugChecks.*' $t  # (the checks on: DebugChecks skips without them)
t=$(L 150) && CS racecheck 1 'Overlap.Own*:Overlap.Transposed*:Overlap.Epilogue*' $t --racecheck-report hazard $skip
t=$(L 100) && CS synccheck 1 'Overlap.OwnGemmTransposedReduce*:Overlap.OwnGemmEpilogue*:Overlap.Transposed*:Overlap.Epilogue*:Overlap.Random*' $t
t=$(L 120) && CS racecheck 1 'Moe.SmallRounds*:Moe.Streamed*:Moe.Pipelined*:Moe.Random*:Rooted.*' $t --racecheck-report hazard $skip
t=$(L 60) && CS memcheck 2 'Fault.*' $t
t=$(L 90) && CS initcheck 1 'Collectives*:DeviceApi.*:Stream.*:Moe.DispatchCombineBf16' $t
true
