# Steps for tools/call.sh on a 4-GPU machine (session 50, not run: no 4-GPU kind was lent; its
# suite and broadcast moved to s71-x4-first.sh in session 71, which runs first): the deferred
# epilogue at TP = 4 in one call, no second tree: symmem-bench overlap at M 8192 and 16384 with
# the default forms (the own GEMM under all_gather_matmul and under 70B's fused reduce-scatter),
# the alt column the same forms with the epilogue stored before the next tile
# (SYMMEM_OVERLAP_DEFER=0), both ways round; then 70B with the fused form's counts at k-block 8
# against 3. ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s50-merge-x4.sh   (timeout 590; carry [".deps"])
O defer SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=0"
O defer-rev SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=0" SYMMEM_OVERLAP_ALT_FIRST=1
O at8 SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_COUNT_AT=8 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_COUNT_AT=3"
true
