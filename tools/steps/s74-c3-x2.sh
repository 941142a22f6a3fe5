# Steps for tools/call.sh on a 2-GPU machine (session 74, call 3): LL grids at 2 ranks up to two
# blocks an SM (work) against 9fd0fb6 (.deps/ab/9fd0fb6: up to 128 blocks), symmem-bench all_reduce,
# reduce_scatter, all_gather, all_to_all and broadcast 64 KiB - 1 MiB alternating, twice; then the
# collectives' tests at 2 ranks on 2 GPUs and 2 on one. ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s74-c3-x2.sh
AAB ar 9fd0fb6 all_reduce -b 64K -e 1M -f 2
AAB rs 9fd0fb6 reduce_scatter -b 128K -e 2M -f 2
AAB ag 9fd0fb6 all_gather -b 128K -e 2M -f 2
AAB a2a 9fd0fb6 all_to_all -b 128K -e 2M -f 2
AAB bc 9fd0fb6 broadcast -b 64K -e 1M -f 2
RS "ar-*" ll one_shot
RS "rs-*" ll push
RS "ag-*" ll push
RS "a2a-*" ll push
RS "bc-*" ll push
FILTER='Collectives*' T 2 1
FILTER='Collectives*' T 2 2
true
