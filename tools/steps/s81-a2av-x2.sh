# Steps for tools/call.sh on a 2-GPU machine (prepared in session 80 for the next session, not
# run): what is left of all_to_all_v's 4.6 us at 2 ranks ("Session 81, first" in docs/NOTES.md).
# The SASS of ll_a2av_kernel (what the verdict's ~1230 cycles of warp 0's shared-memory work wait
# on), then one block against the grid on today's code, alternating, twice (before session 80's
# ticket change one block was 0.3-0.4 us faster at 8 B - 4 KiB; how much of that is left?).
# ~4 minutes with the start. First, here:
#   rm -rf .deps/ab/* .deps/sass; tools/ab.sh define one HEAD SYMMEM_A2AV_MAX_BLOCKS=1
#   tools/cubins.sh a2av src/collectives/ll_a2av.cu
#   COMMIT=<sha> bash tools/call.sh tools/steps/s81-a2av-x2.sh
S
AAB a2av "one" all_to_all_v -b 8 -e 256K -f 8 -n 100
true
