# Steps for tools/call.sh on a 2-GPU machine (session 69's last call, the final code): broadcast's
# push at 2 ranks with the root's own copy on a third of the blocks (calls 4-5's v1split, now on
# main; copy_bytes2 reverted) against efb5656 (every root block copying both its pieces),
# alternating, twice each, 1-16 MiB; then the 1- and 2-GPU suite (as s69-c2-x2.sh), stopped after
# 250 s. ~7 minutes with the start.
#   tools/ab.sh prepare efb5656; COMMIT=<sha> bash tools/call.sh tools/steps/s69-c6-x2.sh
AAB bc efb5656 broadcast -b 1048576 -e 16777216 -f 2  # (labels bc-split-i / bc-before-i when it ran)
RS "bc-*"
SUITE12
true
