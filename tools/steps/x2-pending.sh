# Steps for tools/call.sh on a 2-GPU machine (written in session 53, not run): what a call of
# 2 GPUs can settle while no 4-GPU kind is lent. Before it, here:
#   rm -rf .deps/ab/* && tools/ab.sh prepare c80934b   (branch s46-comb-counts' counted combine)
# 1. The deferred epilogue at TP = 2 in both orders (session 53 ran the first only: inconclusive);
#    the table's last column names each instance's form (mm+rs at TP = 2: the cuBLASLt ring, the
#    control). 2. The counted combine at 2 GPUs, where its ~1 ms stall showed (session 46): tune
#    323 (kSumAfterSends), the counted combine without it and the one-kernel combine, alternated.
#    (The Python examples at 2 GPUs, its third step until then, passed in session 54's call 1.)
#   COMMIT=<sha> bash tools/call.sh tools/steps/x2-pending.sh   (timeout 560; carry [".deps"])
O defer SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=0"
O defer-rev SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=0" SYMMEM_OVERLAP_ALT_FIRST=1
S=decode,pplx_64e_128t,pplx_256e_32t
for i in 1 2; do
  BIN=c80934b B cnt323-$i $S SYMMEM_MOE_TUNE=323
  BIN=c80934b B cnt-$i $S
  BIN=c80934b B one-$i $S SYMMEM_MOE_COUNTED=0
  B main-$i $S
done
BIN=c80934b B cnt323-trace decode SYMMEM_MOE_TUNE=323 SYMMEM_MOE_TRACE=1
