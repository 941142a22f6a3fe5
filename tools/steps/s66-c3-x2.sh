# Steps for tools/call.sh on a 2-GPU machine (session 66, call 3): calls 1-2 found the first
# TensorParallel made the fastest of 4-8 identical instances at 70B mm+rs M 16384 in 3 of 3 runs
# (by 1-3%), at the same SM clock. Is it its place in memory (made first) or its use (the
# sequential column runs on it too; it runs first uncaptured)? SYMMEM_OVERLAP_SPACER=1 makes one
# instance, never run, before all: if the advantage goes, placement. 70B mm+rs M 16384, four
# instances a column, spacer 0 / 1 alternating, three each; then ag 70B M 16384 once each.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s66-c3-x2.sh
for i in 1 2 3; do
  for sp in 0 1; do
    O sp$sp-$i SYMMEM_OVERLAP_SPACER=$sp SYMMEM_OVERLAP_TWINS=4 SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=2 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=16384 | grep -E "^==|rror"
    TW sp$sp-$i
  done
done
for sp in 0 1; do
  O ag-sp$sp SYMMEM_OVERLAP_SPACER=$sp SYMMEM_OVERLAP_TWINS=4 SYMMEM_OVERLAP_OPS=ag SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=2 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=16384 | grep -E "^==|rror"
  TW ag-sp$sp
done
true
