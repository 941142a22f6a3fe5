# Session 85, call 4 (2 GPUs, 229 s, timing only; run on 8ceabb3 = main + tools/steps/s85-ll-spread.patch; refuted, see HISTORY "Measured in session 85"): the work tree = main + ll_kernel's and ll_rooted_kernel's lines spread over the
# grid's blocks (device::grid_index_spread: warp 0 of every block before warp 1 of any; before, a
# line a thread filled only the first lines / 512 of the ~lines / 64 blocks) + seq_begin taking
# its ticket through seq_take_ticket (s85-seq-ticket-once.patch). Against main (.deps/ab/main),
# alternating, twice, every operation of both kernels from one line to past the LL range. (The
# collective tests passed on this tree at 1 rank, 2 and 4 on one GPU and with the debug checks in
# call 3, on one H200; the final suite follows if it lands.)
# Setup: rm -rf .deps/ab/* .deps/sass && tools/ab.sh prepare main; then
#   WORK_TARGETS=symmem-bench COMMIT=<sha> bash tools/call.sh tools/steps/s85-ll-spread-x2.sh (carry [".deps"])
AAB ar "main" all_reduce -b 8 -e 4M -f 4 -n 100
AAB ag "main" all_gather -b 1K -e 4M -f 4 -n 100
AAB rs "main" reduce_scatter -b 1K -e 4M -f 4 -n 100
AAB a2a "main" all_to_all -b 8 -e 4M -f 4 -n 100
AAB bc "main" broadcast -b 8 -e 4M -f 4 -n 100
AAB red "main" reduce -b 8 -e 4M -f 4 -n 100
AAB ga "main" gather -b 1K -e 4M -f 4 -n 100
AAB sc "main" scatter -b 1K -e 4M -f 4 -n 100
true
