# Steps for tools/call.sh on a 2-GPU machine (session 77, call 3): the 8-byte reductions past the
# narrow lines' capacity (auto falls back to push there; symmem-bench's candidates no longer hold
# ll past it): all_reduce int64 / double and reduce_scatter double to 4 MiB, each candidate's time
# by size (push against one_shot / two_shot / direct and NCCL, for the fallback's choice); the
# collectives' tests at 2 ranks on one GPU (no NCCL: the fallbacks of every type); the Python suite
# at 2 GPUs. ~5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s77-c3-x2.sh
for d in int64 double; do
  A "ar-$d" all_reduce -d $d -b 256K -e 4M
  grep -E "^ +[0-9]+ " "$OUT/a.log" | awk '{w += $8} END {print "   rows " NR ", wrong (symmem) " w}'
done
A rs-double reduce_scatter -d double -b 256K -e 8M
grep -E "^ +[0-9]+ " "$OUT/a.log" | awk '{w += $8} END {print "   rows " NR ", wrong (symmem) " w}'
A ar-float all_reduce -d float -b 256K -e 4M
RS "ar-*" ll push one_shot two_shot two_shot_push
RS "rs-*" ll push direct
TLIMIT=300 FILTER='Collectives*' T 2 2
SUITE_STOP_S=200 SUITE12 "python_gpu_2gpus"
true
