# Steps for tools/call.sh on a 2-GPU machine (session 62, call 4): why the straddle lost in call 3
# (8B mm+rs M 16384: 1.064-1.085 against 1.041-1.060 without, every pair). The same A/B with its
# helpers off (SYMMEM_HGEMM_T_DEBUG=1: the straddle's own rows left unsummed, timing only), both
# ways round, twice; 8B only.
# (SYMMEM_HGEMM_T_DEBUG existed in commits fdb0441-826bad9 only: run these steps on those.)
#   COMMIT=<sha> bash tools/call.sh tools/steps/s62-c4-x2.sh
for i in 1 2; do
  O dbg-st-$i SYMMEM_HGEMM_T_DEBUG=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_STRADDLE=0 | grep -E "^==|mm\\+rs"
  O dbg-no-$i SYMMEM_HGEMM_T_DEBUG=1 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=16384 SYMMEM_OVERLAP_RS_STRADDLE=0 SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_STRADDLE=1 | grep -E "^==|mm\\+rs"
done
true
