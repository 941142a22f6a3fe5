# Steps for tools/call.sh on a 2-GPU machine (session 69, call 5): call 4 found broadcast's cliff
# at 32 MiB gone where barrier_block waits by relaxed polls 500 ns apart (push 112.0 us against
# 461-494, direct 101 against 335-357; NCCL 112.5), but 8 MiB 3 us slower and 64 MiB still off
# (442-557), and the root's own copy on a third of the blocks 9-12% faster at 8-16 MiB and 64 MiB
# 265-292 (32 MiB still off). Three trees beside the work tree, alternating, twice each:
# v3splitquiet (both), v4hybrid (16 acquire polls, then relaxed polls 200 ns apart and one fence),
# v5splithybrid (the split and v4's wait). Broadcast 1-64 MiB; all_reduce 1 KiB-1 MiB of main and
# v4 (the barrier's cost at small sizes). ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s69-c5-x2.sh
for i in 1 2; do
  A bc-main-$i broadcast -b 1048576 -e 67108864 -f 2
  for t in v3splitquiet v4hybrid v5splithybrid; do BIN=$t A bc-$t-$i broadcast -b 1048576 -e 67108864 -f 2; done
done
for i in 1 2; do
  A ar-main-$i all_reduce -b 1024 -e 4194304 -f 4
  BIN=v4hybrid A ar-v4hybrid-$i all_reduce -b 1024 -e 4194304 -f 4
done
RS "bc-*"
RS "ar-*" ll push one_shot two_shot
true
