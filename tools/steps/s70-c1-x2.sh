# Steps for tools/call.sh on a 2-GPU machine (session 70, call 1): barrier_block's patient wait
# (acquire polls for its first 4 us, then relaxed polls 500 ns apart) against main (44d3681: acquire
# polls all along) and three settings of it in .deps/ab (pe4b1000, pe12b500, pe1b500: eager us,
# backoff ns), alternating, twice: broadcast 1-64 MiB (session 69's cliff at 32 MiB), all_gather
# 1-128 MiB and all_reduce 1 KiB-4 MiB (what the barrier costs where waits are short); then the
# 1- and 2-GPU suite on the work tree and the README's main job (also the first run of session
# 69's host-side changes to symmem-bench). ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s70-c1-x2.sh
for i in 1 2; do
  A bc-work-$i broadcast -b 1048576 -e 67108864 -f 2
  for t in main pe4b1000 pe12b500 pe1b500; do BIN=$t A bc-$t-$i broadcast -b 1048576 -e 67108864 -f 2; done
done
for i in 1 2; do
  A ag-work-$i all_gather -b 1048576 -e 134217728 -f 4
  BIN=main A ag-main-$i all_gather -b 1048576 -e 134217728 -f 4
  A ar-work-$i all_reduce -b 1024 -e 4194304 -f 4
  BIN=main A ar-main-$i all_reduce -b 1024 -e 4194304 -f 4
  A rs-work-$i reduce_scatter -b 65536 -e 67108864 -f 8
  BIN=main A rs-main-$i reduce_scatter -b 65536 -e 67108864 -f 8
done
RS "bc-*"
RS "ag-*"
RS "ar-*" ll push one_shot two_shot
RS "rs-*" push direct one_shot two_shot
SUITE12
MAINJOB 470
true
