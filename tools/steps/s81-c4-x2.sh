# Session 81, call 4 (2 GPUs): the ticket as a relaxed add after every thread's acquire load of the
# epoch (the work tree) against the release add (base: 5fcb3bf) and the relaxed add without the
# acquire loads (rlx: s81-exp with SYMMEM_SEQ_TICKET_RELAXED=1, call 3's diagnostic: 0.28 us less
# at 2 ranks), alternating, twice: all_to_all_v, then all_reduce and all_to_all, whose LL grids
# grow with the size. Then the first half of the final suite (as tools/steps/s79-c5-x2.sh); the
# second half is tools/steps/s79-c6-x2.sh, at once after it.
AAB a2av "base rlx" all_to_all_v -b 8 -e 256K -f 8 -n 100
AAB ar "base rlx" all_reduce -b 8 -e 1M -f 4 -n 100
AAB a2a "base rlx" all_to_all -b 8 -e 1M -f 8 -n 100
SUITE_STOP_S=340 SUITE12 "gpu_1rank|multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm_2ranks_1gpu"
true
