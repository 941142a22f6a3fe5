# Steps for tools/call.sh on a 2-GPU machine (session 77, call 2): NCCL's element types in the
# collectives (int8, uint32, int64, uint64, float64 new; uint8 reduces): the collectives' tests at 2
# ranks on 2 GPUs, at 3 on 2 (8-byte types without two-shot LL) and at 1; symmem-bench all_reduce
# and reduce_scatter in the new types beside NCCL (its own check of every output: "wrong"); then
# the Python suite at 2 GPUs (the new test of int8 / uint8 / int64 / float64 / bool and complex64
# moved as bytes). ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s77-c2-x2.sh
TLIMIT=300 FILTER='Collectives*:Stream*' T 2 1
TLIMIT=200 FILTER='Collectives.*EveryType*:Collectives.AllReduceLLTwoShot:Collectives.Bad*' T 3 2
TLIMIT=120 FILTER='Collectives*' T 1 1
for d in int64 double int8 uint8 uint32 uint64; do
  A "ar-$d" all_reduce -d $d -b 8 -e 4M
  grep -E "^ +[0-9]+ " "$OUT/a.log" | awk '{w += $8} END {print "   rows " NR ", wrong (symmem) " w}'
done
A ar-int64-max all_reduce -d int64 -o max -b 8 -e 1M
A ar-int8-avg all_reduce -d int8 -o avg -b 8 -e 1M
A rs-double reduce_scatter -d double -b 8 -e 4M
grep -E "^#|^ +[0-9]+ " "$OUT/a.log" | head -4
SUITE_STOP_S=200 SUITE12 "python_gpu_2gpus"
true
