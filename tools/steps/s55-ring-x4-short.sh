# Steps for tools/call.sh on a 4-GPU machine with little device time left (~3 minutes with the
# start): the epilogue ring against 8B's default forms at TP = 4, both ways round. The full form is
# s55-ring-x4.sh (its tests first).
#   COMMIT=<sha> bash tools/call.sh tools/steps/s55-ring-x4-short.sh
O ring SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=ring
O ring-rev SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_OWN_RS=ring SYMMEM_OVERLAP_ALT_FIRST=1
true
