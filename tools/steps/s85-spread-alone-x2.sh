# Session 85, call 6 (2 GPUs, ~220 s, timing only): the spread lines alone (branch spo = main + the
# copy.cuh, ll.cu and ll_rooted.cu parts of tools/steps/s85-ll-spread.patch; without the
# ticket's add written once, which call 5 found 0.02-0.14 us slower by itself) against main,
# alternating, twice. Call 4 (both changes) was faster only at a few multi-block sizes.
# Setup: rm -rf .deps/ab/*; git branch -f spo main; git checkout spo; git apply
#   --exclude='include/symmem/device/workspace.cuh' tools/steps/s85-ll-spread.patch; commit; back to
#   main; tools/ab.sh prepare spo; WORK_TARGETS=symmem-bench COMMIT=<main> bash tools/call.sh
#   tools/steps/s85-spread-alone-x2.sh (carry [".deps"])
AAB ar "spo" all_reduce -b 8 -e 1M -f 4 -n 100
AAB ag "spo" all_gather -b 1K -e 4M -f 4 -n 100
AAB rs "spo" reduce_scatter -b 1K -e 4M -f 4 -n 100
AAB a2a "spo" all_to_all -b 8 -e 1M -f 4 -n 100
AAB bc "spo" broadcast -b 8 -e 1M -f 4 -n 100
AAB sc "spo" scatter -b 1K -e 4M -f 4 -n 100
true
