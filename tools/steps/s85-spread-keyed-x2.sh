# Session 85, call 7 (2 GPUs, ~380 s): the spread lines where call 6 measured them faster (ll_kernel's
# all-gather and broadcast, ll_rooted_kernel's scatter; the other operations keep grid_index, their
# code unchanged): the collective tests at 1-4 ranks and the debug checks, then against main
# (.deps/ab/main) alternating, twice, then the README's main job (every collective checked, wrong 0).
# Setup: rm -rf .deps/ab/* && tools/ab.sh prepare main; COMMIT=<sha> bash tools/call.sh
#   tools/steps/s85-spread-keyed-x2.sh (carry [".deps"])
COLLTESTS
AAB ag "main" all_gather -b 1K -e 1M -f 4 -n 100
AAB bc "main" broadcast -b 8 -e 1M -f 4 -n 100
AAB sc "main" scatter -b 1K -e 1M -f 4 -n 100
AAB ar "main" all_reduce -b 8 -e 512K -f 8 -n 100
AAB ga "main" gather -b 1K -e 1M -f 4 -n 100
MAINJOB
true
