# Steps for tools/call.sh on a 4-GPU machine (written in session 56, never run): symmem-bench
# overlap at TP = 4, both models, M 8192 / 16384, twice, with the floor on cuBLASLt's fastest plan
# (session 56's pick_floor; every 4-GPU ratio before it was against the tuner's pick, which at
# 16384 rows could be up to 9% slower); then 8B with the epilogue ring in the alt column, both ways
# round. ~4 minutes with the start. Run after s50-merge-x4.sh.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s56-floor-x4.sh
for i in 1 2; do O floor4-$i SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm|ag"; done
for first in 0 1; do
  O ring4-f$first SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=ring SYMMEM_OVERLAP_ALT_FIRST=$first SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|mm|ag"
done
true
