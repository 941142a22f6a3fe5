# compute-sanitizer's other tools over symmem_gpu_tests at 1 rank (one GPU; after s102-csan-x1.sh,
# best on its still-warm machine, which keeps the -lineinfo build): racecheck (shared-memory
# hazards: the GEMMs' stage rings, MoE's routing counts, the reductions), synccheck (barriers used
# unlike across a block's threads, mbarriers) and initcheck (global memory read before any write;
# at 1 rank only: a peer process's writes are invisible to this process's sanitizer).
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo bash tools/call.sh tools/steps/s102-csan2-x1.sh
. tools/steps/csan.sh
t=$(L 170) && CS racecheck 1 'Moe.*:Overlap.*:Collectives.*:Rooted.*' $t --racecheck-report hazard
t=$(L 170) && CS synccheck 1 '-Fault.*' $t
t=$(L 170) && CS initcheck 1 '-Fault.*' $t
true
