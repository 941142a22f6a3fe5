# Steps for tools/call.sh on a 2-GPU machine (session 78, call 6): the rooted collectives' tests at
# 4 ranks on 2 GPUs (the LL tokens and barriers at N = 4; no NCCL where ranks share a GPU).
# ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s78-c6-x2.sh
TLIMIT=150 FILTER='Rooted.*' T 4 2
true
