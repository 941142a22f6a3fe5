# Prepared in session 81 for the next (2 GPUs, ~220 s with the build; timing only, not run yet):
# where ll_kernel (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast in LL lines) takes
# its block's ticket. Session 81 (call 4): seq_begin's ticket as a relaxed add (a diagnostic) took
# 0.05-0.07 us off all_reduce at 8-32 KiB and 0.16 off all_to_all at 32 KiB: the release's fence
# delays the last warp's sends by its round trip. tools/steps/s82-ll-ticket.patch adds
# SYMMEM_LL_TICKET_AT: 0 in seq_begin (as main), 1 after the thread's sends (the fence waits for
# their stores while the peers' lines are on their way), 2 before seq_end (the tail). Both against
# main, alternating, twice. If one wins at every size, make it ll_kernel's form (no macro) and run
# the collective tests (call.sh's COLLTESTS) before it lands.
# First, here (on main):
#   rm -rf .deps/ab/*
#   git branch -f llt HEAD && git checkout -q llt && git apply tools/steps/s82-ll-ticket.patch &&
#     git commit -qam "SYMMEM_LL_TICKET_AT (experiment)" && git checkout -q main
#   tools/ab.sh define at1 llt SYMMEM_LL_TICKET_AT=1
#   tools/ab.sh define at2 llt SYMMEM_LL_TICKET_AT=2
#   WORK_TARGETS=symmem-bench COMMIT=<main's sha> bash tools/call.sh tools/steps/s82-ll-ticket-x2.sh   (carry [".deps"])
AAB ar "at1 at2" all_reduce -b 8 -e 1M -f 4 -n 100
AAB a2a "at1 at2" all_to_all -b 8 -e 1M -f 8 -n 100
AAB ag "at1 at2" all_gather -b 1K -e 1M -f 8 -n 100
AAB rs "at1 at2" reduce_scatter -b 1K -e 1M -f 8 -n 100
true
