# Steps for tools/call.sh on a 4-GPU machine (prepared in session 74, not yet run): LL grids of two
# blocks an SM at 3 and 4 ranks. Session 74 gave them to 2-rank teams only (detail::ll_grid); the
# tree .deps/ab/llwide gives them to teams of up to 8 (make it first, from the same commit:
#   tools/ab.sh define llwide HEAD SYMMEM_LL_WIDE_GRID_MAX_RANKS=8
# and clear every other tree from .deps/ab). symmem-bench all_reduce / reduce_scatter / all_gather
# / all_to_all 64 KiB - 4 MiB alternating, twice, at 4 ranks; then the collectives' tests of the
# llwide tree at 4 ranks (AB_TARGETS="symmem_gpu_tests symmem-run" builds them). ~6 minutes with
# the start. At 4 ranks the all-reduce's LL form is two-shot above 256 KiB (fewer lines a rank), so
# expect less than at 2 ranks; a gain goes in by raising the default in tuning.cpp, with the JSON.
#   AB_TARGETS="symmem_gpu_tests symmem-run" COMMIT=<sha> bash tools/call.sh tools/steps/s75-llgrid-x4.sh
AAB ar llwide all_reduce -b 64K -e 4M -f 2
AAB rs llwide reduce_scatter -b 64K -e 4M -f 2
AAB ag llwide all_gather -b 64K -e 4M -f 2
AAB a2a llwide all_to_all -b 64K -e 4M -f 2
RS "ar-*" ll two_shot
RS "rs-*" ll push
RS "ag-*" ll push
RS "a2a-*" ll push
BIN=llwide FILTER='Collectives*' T 4 1
true
