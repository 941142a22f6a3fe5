# Steps for tools/call.sh on a 2-GPU machine (prepared in session 80 for the next session, not
# run): what is left of all_to_all_v's 4.6 us at 2 ranks ("Session 81, first" in docs/NOTES.md).
# (1) Is a phase's fixed cost the fetch of its code? ll_a2av_kernel's SASS (session 80, call 6) is
# 154 KB, the 2-rank body ~61 KB, and the verdict alone 728 instructions of straight-line code that
# warp 0 walks once a launch. The stamps with the verdict run three times in a loop (vr: the
# "first" pass against the whole "verdict" phase: a first pass far slower than the other two is
# the fetch); the plain stamps (st) beside, and those of the lean form (lst: s81-a2av-lean.patch,
# the verdict's judge inlined once and its rank loop not unrolled, 11 KB less code; branch
# s81-a2av-lean where this checkout still has it). (2) The lean form and one block (today's code,
# SYMMEM_A2AV_MAX_BLOCKS=1; before session 80's ticket change one block was 0.3-0.4 us faster at
# 8 B - 4 KiB) against the work tree, alternating, twice. ~5 minutes with the start (session 80's
# last call built for 196 s). If the lean form is faster, run the collective tests on it
# (`Collectives.*:Collectives/*` at 1, 2 and 3 ranks) before it lands.
# First, here:
#   rm -rf .deps/ab/* .deps/sass
#   git branch -f lean HEAD && git checkout -q lean && git apply tools/steps/s81-a2av-lean.patch &&
#     git commit -qam "lean (experiment)" && git checkout -q -; tools/ab.sh prepare lean
#   tools/ab.sh define lst lean SYMMEM_A2AV_STAMPS=1
#   tools/ab.sh define one HEAD SYMMEM_A2AV_MAX_BLOCKS=1
#   tools/ab.sh define st HEAD SYMMEM_A2AV_STAMPS=1
#   tools/ab.sh define vr HEAD SYMMEM_A2AV_STAMPS=1 SYMMEM_A2AV_VERDICT_REPS=3
#   COMMIT=<sha> bash tools/call.sh tools/steps/s81-a2av-x2.sh
for t in st vr lst; do
  BIN=$t A "$t-1K" all_to_all_v -b 1K -e 1K -n 100
  grep 'a2av stamps' "$OUT/a.log" | tail -4
done
AAB a2av "lean one" all_to_all_v -b 8 -e 256K -f 8 -n 100
true
