# Steps for tools/call.sh on a 2-GPU machine (session 79, call 3): LL all_to_all_v's phase stamps
# at 2 ranks (.deps/ab/stamps: HEAD built with SYMMEM_A2AV_STAMPS=1), 8 B, 1 KiB and 64 KiB, 100
# ops a graph; the work tree's all_to_all_v and all_to_all beside. ~3 minutes with the start.
#   tools/ab.sh define stamps HEAD SYMMEM_A2AV_STAMPS=1; COMMIT=<sha> bash tools/call.sh tools/steps/s79-c3-x2.sh
for sz in 8 1K 64K; do
  BIN=stamps A "stamps-$sz" all_to_all_v -b "$sz" -e "$sz" -n 100
  grep 'a2av stamps' "$OUT/a.log" | tail -4
  cp "$OUT/a.log" "$OUT/stamps-$sz.log"
done
A a2av all_to_all_v -b 8 -e 64K -f 8 -n 100
A a2a all_to_all -b 8 -e 64K -f 8 -n 100
true
