# compute-sanitizer over the MoE and overlap suites (memcheck at 1 and 2 ranks), then racecheck
# (shared-memory hazards: the GEMMs' stage rings, MoE's routing counts, the reductions) and
# synccheck (barriers used unlike across a block's threads, mbarriers) at 1 rank. Best on the
# still-warm machine s102-csan-x1.sh left (its -lineinfo build).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo bash tools/call.sh tools/steps/s102-csan2-x1.sh
. tools/steps/csan.sh
t=$(L 120) && CS memcheck 1 'Moe.*:Overlap.*:AllToAllV.*' $t
t=$(L 120) && CS memcheck 2 'Moe.*:Overlap.Gemms*:Overlap.Wide*:Overlap.Odd*:Overlap.Half*:Overlap.Replayed*' $t
t=$(L 100) && CS racecheck 1 'Moe.*:Overlap.*:Collectives.*' $t --racecheck-report hazard
t=$(L 100) && CS synccheck 1 'Moe.*:Overlap.*:Collectives.*:DeviceApi.*' $t
true
