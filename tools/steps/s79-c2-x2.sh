# Steps for tools/call.sh on a 2-GPU machine (session 79, call 2): where LL all_to_all_v's time goes
# at 2 ranks (5.2 us at 1 KiB against all_to_all's 2.5): the phase stamps of .deps/ab/stamps
# (ffb79b5 built with SYMMEM_A2AV_STAMPS=1) at 8 B, 1 KiB and 64 KiB; the work tree (the 2-rank
# form's peer bases loaded beside the counts) against ffb79b5 (.deps/ab/ffb79b5) alternating,
# twice; all_to_all beside it; then the all_to_all_v and random tests on the work tree.
# ~5 minutes with the start.
#   tools/ab.sh prepare ffb79b5; tools/ab.sh define stamps ffb79b5 SYMMEM_A2AV_STAMPS=1
#   COMMIT=<sha> bash tools/call.sh tools/steps/s79-c2-x2.sh
for sz in 8 1K 64K; do
  BIN=stamps A "stamps-$sz" all_to_all_v -b "$sz" -e "$sz"
  grep 'a2av stamps' "$OUT/a.log" | tail -4
done
AAB a2av "ffb79b5" all_to_all_v -b 8 -e 256K -f 8
A a2a all_to_all -b 8 -e 256K -f 8
TLIMIT=200 FILTER='Collectives/AllToAllV.*:Random*' T 2 1
true
