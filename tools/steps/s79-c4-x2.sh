# Steps for tools/call.sh on a 2-GPU machine (session 79, call 4): all_to_all_v's counts loaded
# before seq_begin and its verdict by warp 0 (the work tree) against d7656fa (.deps/ab/d7656fa)
# alternating, twice, 100 ops a graph; the new phase stamps (.deps/ab/stamps2); all_to_all beside;
# then the all_to_all_v tests at 2 ranks on 2 GPUs (with the collectives and random tests), 3 and
# 4 ranks on 2 GPUs (the grouped form) and 1 rank. ~5 minutes with the start.
#   tools/ab.sh prepare d7656fa; tools/ab.sh define stamps2 HEAD SYMMEM_A2AV_STAMPS=1
#   COMMIT=<sha> bash tools/call.sh tools/steps/s79-c4-x2.sh
TLIMIT=200 FILTER='Collectives.*:Collectives/*:Random*' T 2 1
TLIMIT=150 FILTER='Collectives/AllToAllV.*:Random*' T 3 2
TLIMIT=150 FILTER='Collectives/AllToAllV.*' T 4 2
TLIMIT=100 FILTER='Collectives/AllToAllV.*' T 1 1
AAB a2av "d7656fa" all_to_all_v -b 8 -e 256K -f 8 -n 100
for sz in 8 1K; do
  BIN=stamps2 A "stamps2-$sz" all_to_all_v -b "$sz" -e "$sz" -n 100
  grep 'a2av stamps' "$OUT/a.log" | tail -4
done
A a2a all_to_all -b 8 -e 256K -f 8 -n 100
true
