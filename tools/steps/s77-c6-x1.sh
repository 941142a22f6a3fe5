# Steps for tools/call.sh on a 1-GPU machine (session 77, call 6; the 2-GPU kind was not lent):
# int8 / uint8 reduce in their own width (an average divides the wrapped sum, as NCCL's
# SumPostDiv): the every-type tests at 1 rank and at 2 ranks on the GPU (no NCCL between them).
# ~4 minutes with the start. (s77-c6-x2.sh is the same at 2 GPUs, with NCCL beside symmem.)
#   COMMIT=<sha> bash tools/call.sh tools/steps/s77-c6-x1.sh
TLIMIT=150 FILTER='Collectives.*EveryType*:Collectives.AllReduceLLTwoShot:Collectives.Bad*' T 1 1
TLIMIT=200 FILTER='Collectives.*EveryType*:Collectives.Bad*' T 2 2
true
