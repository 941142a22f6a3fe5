# Session 85, call 5 (2 GPUs, ~220 s, timing only): seq_begin taking its ticket through
# seq_take_ticket (the add written once; branch once = main + the workspace.cuh part of
# tools/steps/s85-ll-spread.patch, the same change as s85-seq-ticket-once.patch with its comments
# in order) against main, alternating, twice: call 4's tree (this + the spread lines) was
# 0.05-0.09 us slower even where the grid is one block and the lines map as before.
# Setup: rm -rf .deps/ab/*; git branch -f once main; git checkout once; git apply
#   --include='include/symmem/device/workspace.cuh' tools/steps/s85-ll-spread.patch; commit; back to
#   main; tools/ab.sh prepare once; WORK_TARGETS=symmem-bench COMMIT=<main> bash tools/call.sh
#   tools/steps/s85-ticket-once-x2.sh (carry [".deps"])
AAB ar "once" all_reduce -b 8 -e 512K -f 4 -n 100
AAB ag "once" all_gather -b 1K -e 1M -f 4 -n 100
AAB a2a "once" all_to_all -b 8 -e 512K -f 4 -n 100
AAB red "once" reduce -b 8 -e 512K -f 4 -n 100
AAB a2av "once" all_to_all_v -b 8 -e 256K -f 8 -n 100
true
