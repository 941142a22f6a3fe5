# Steps for tools/call.sh on a 2-GPU machine (session 70, call 4, the final library code):
# barrier_block's patient wait as settled (8 us eager, pauses 1/64 of the time past it, up to 4
# us) beside main (44d3681): broadcast 1-128 MiB, all_reduce and all_gather 16-256 MiB, each tree
# once; then the 1- and 2-GPU suite and the README's main job. ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s70-c4-x2.sh
A bc-work broadcast -b 1048576 -e 134217728 -f 2
BIN=main A bc-main broadcast -b 1048576 -e 134217728 -f 2
A ar-work all_reduce -b 16777216 -e 268435456 -f 4
BIN=main A ar-main all_reduce -b 16777216 -e 268435456 -f 4
A ag-work all_gather -b 16777216 -e 268435456 -f 4
BIN=main A ag-main all_gather -b 16777216 -e 268435456 -f 4
RS "bc-*"
RS "ar-*" one_shot two_shot two_shot_push
RS "ag-*"
SUITE12
MAINJOB 470
true
