# Steps for tools/call.sh on a 2-GPU machine (session 69, call 4): why broadcast's push and direct
# fall off from 32 MiB at 2 ranks (call 3: push 326-507 us, direct 340-350, NCCL 112; 16 MiB
# 59.7 / 53.1 / 63.3). Two diagnostic trees beside the work tree, alternating, twice each:
# .deps/ab/v1split (push: the root's own copy on a third of the blocks, its peer's on the rest,
# as all_gather splits them; the peer only in the barriers) and .deps/ab/v2quiet (every
# barrier_block waits by relaxed polls 500 ns apart and one fence, not acquire loads at system
# scope). Broadcast 8-64 MiB, then all_gather at the same sizes. ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s69-c4-x2.sh   (the trees: see NOTES, session 69)
for i in 1 2; do
  A bc-main-$i broadcast -b 8388608 -e 67108864 -f 2
  BIN=v1split A bc-v1split-$i broadcast -b 8388608 -e 67108864 -f 2
  BIN=v2quiet A bc-v2quiet-$i broadcast -b 8388608 -e 67108864 -f 2
done
A ag-main all_gather -b 8388608 -e 134217728 -f 2
BIN=v2quiet A ag-v2quiet all_gather -b 8388608 -e 134217728 -f 2
RS "*"
true
