# Sourced by session 62's steps (tools/call.sh's helpers): symmem-bench overlap at M 16384, both
# models, the straddle against none in one process (SYMMEM_OVERLAP_ALT), both ways round, twice.
for i in 1 2; do
  O st-$i SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_STRADDLE=0 | grep -E "^==|mm\\+rs"
  O no-$i SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_RS_STRADDLE=0 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_STRADDLE=1 | grep -E "^==|mm\\+rs"
done
