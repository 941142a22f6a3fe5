# Steps for tools/call.sh on a 2-GPU machine (session 71's last call, the final code): (1)
# barrier_block's new 16 us cap (the work tree) beside the old 4 us (tree cap4) on the large
# sizes of every collective, where a barrier's wait can outlast 264 us (the pause passes 4 us
# there): 64 MiB-1 GiB, alternating, once; (2) the 1- and 2-GPU suite; (3) the README's main job.
# ~8.5 minutes with the start.
#   rm -rf .deps/ab/* && tools/ab.sh define cap4 HEAD SYMMEM_BARRIER_BACKOFF_NS=4000
#   COMMIT=<sha> bash tools/call.sh tools/steps/s71-c3-x2.sh
for op in broadcast all_reduce all_gather reduce_scatter all_to_all; do
  A $op-work $op -b 67108864 -e 1073741824 -f 2
  BIN=cap4 A $op-cap4 $op -b 67108864 -e 1073741824 -f 2
done
RS "*-work"
RS "*-cap4"
SUITE12
MAINJOB 470
true
