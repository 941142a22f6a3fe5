# Steps for tools/call.sh on a 2-GPU machine (session 77, call 6): int8 / uint8 reduce in their own
# width (an average divides the wrapped sum, as NCCL's SumPostDiv): the every-type tests at 2 ranks
# on 2 GPUs (with NCCL beside symmem for every integer op) and at 2 ranks on one GPU. ~5 minutes
# with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s77-c6-x2.sh
TLIMIT=200 FILTER='Collectives.*EveryType*:Collectives.AllReduceLLTwoShot:Collectives.Bad*' T 2 1
TLIMIT=150 FILTER='Collectives.*EveryType*' T 2 2
true
