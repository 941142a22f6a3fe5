# Prepared in session 82 for the next (2 GPUs, ~250 s with the build; run in session 83 call 1, 281 s,
# and landed as 8a48200: docs/NOTES.md "Session 83 in short"): all_to_all_v's
# pair form loads each thread's first data line from the peer right after the header barrier,
# before the verdict (tools/steps/s83-a2av-early.patch), so that its round trip (block 0's data
# phase ~1950 cycles at 1 KiB, session 82 call 7) runs under the verdict's ~650. Against main,
# alternating, twice, with its stamps at 1 KiB (main's, session 82 call 7: verdict 652, data 1954);
# then the collective tests at 1, 2, 3 and 4 ranks (2 GPUs), 2 on one GPU, and with the debug
# checks. If it is faster at every size and every test passes, merge it (git merge early) before
# the final suite (s79-c5 then s79-c6), which then runs on it.
# First, here (on main):
#   rm -rf .deps/ab/* .deps/sass
#   git branch -f early HEAD && git checkout -q early && git apply tools/steps/s83-a2av-early.patch &&
#     git commit -qam "all_to_all_v: the pair form's first data line loaded before the verdict (experiment)"
#   tools/ab.sh prepare main && mv .deps/ab/main .deps/ab/base
#   tools/ab.sh define est early SYMMEM_A2AV_STAMPS=1
#   COMMIT=<early's sha> bash tools/call.sh tools/steps/s83-a2av-early-x2.sh   (on branch early; carry [".deps"])
A2AV_STAMPS est
AAB a2av "base" all_to_all_v -b 8 -e 256K -f 8 -n 100
COLLTESTS
true
