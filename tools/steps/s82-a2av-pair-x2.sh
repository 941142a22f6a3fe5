# Prepared in session 81 for the next (2 GPUs, ~260 s with the build; not run yet): all_to_all_v's
# pair form (tools/steps/s82-a2av-pair.patch: at n <= 2 every thread judges from the 2 x 2 counts
# in shared memory and keeps the plan and offsets in registers, no warp shuffles, no prefix sums,
# no barrier after the verdict; 0x23780 bytes of code against 0x25f00) against main, alternating,
# twice, with the stamps of both at 1 KiB (session 81: warp 0's verdict ~1230 cycles of 2 ranks'
# ~8700 after the wait), 1-64 MiB once each; then the collective tests on the pair form at 1, 2, 3
# and 4 ranks (2 GPUs), 2 on one GPU, and with the debug checks. If it is faster at every size and
# every test passes, merge it (git merge pair) and run the final suite (s79-c5 then s79-c6).
# First, here (on main):
#   rm -rf .deps/ab/* .deps/sass
#   git branch -f pair HEAD && git checkout -q pair && git apply tools/steps/s82-a2av-pair.patch &&
#     git commit -qam "all_to_all_v: the pair form's verdict (experiment)"
#   tools/ab.sh prepare main && mv .deps/ab/main .deps/ab/base
#   tools/ab.sh define mst main SYMMEM_A2AV_STAMPS=1
#   tools/ab.sh define pst pair SYMMEM_A2AV_STAMPS=1
#   COMMIT=<pair's sha> bash tools/call.sh tools/steps/s82-a2av-pair-x2.sh   (on branch pair; carry [".deps"])
A2AV_STAMPS mst pst
AAB a2av "base" all_to_all_v -b 8 -e 256K -f 8 -n 100
A big-work all_to_all_v -b 1M -e 64M -f 4 -n 20
BIN=base A big-base all_to_all_v -b 1M -e 64M -f 4 -n 20
COLLTESTS
true
