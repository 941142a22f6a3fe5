# Steps for tools/call.sh on a 2-GPU machine (session 69, call 3): broadcast's push with the root's
# own copy made from the same loads as the peer's (copy_bytes2; call 2's main job: push 23.1 / 61.9
# us at 4 / 16 MiB against NCCL's 24.5 / 63.5, while one SM put of 4 MiB reaches 314 GB/s, 13.4
# us). (1) symmem-bench broadcast 1-64 MiB of the work tree and of .deps/ab/efb5656 (before)
# alternating, twice each; (2) the 1- and 2-GPU suite (as s69-c2-x2.sh; copy_bytes serves every
# kernel that copies). ~8 minutes with the start.
#   tools/ab.sh prepare efb5656; COMMIT=<sha> bash tools/call.sh tools/steps/s69-c3-x2.sh
AAB bc efb5656 broadcast -b 1048576 -e 67108864 -f 2  # (labels bc-new-i / bc-old-i when it ran)
RS "bc-*"
SUITE12
true
