# Steps for tools/call.sh on a 2-GPU machine (session 70, call 2): call 1 found barrier_block's
# patient wait ending broadcast's cliff at 32 MiB in every setting and at 64 MiB with 1 us pauses
# (4 us eager: push 193.6 us, direct 190, NCCL 206), but a fixed pause costing 1.4-2.2 us where a
# transfer outlasts the eager time (2-16 MiB). Here pauses that grow with the time waited: the work
# tree (8 us eager, 1/32 of the time past it, up to 1 us) beside g16s6 / g8s6 (16 / 8 us eager,
# 1/64, up to 1 us), g4s6c2 (4 us, 1/64, up to 2 us), call 1's pe4b1000 and main, alternating, twice:
# broadcast 1-128 MiB. ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s70-c2-x2.sh
AAB bc "main pe4b1000 g16s6 g8s6 g4s6c2" broadcast -b 1048576 -e 134217728 -f 2
RS "bc-*"
true
