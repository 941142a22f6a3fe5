# Steps for tools/call.sh on a 2-GPU machine (session 59, call 1): Overlap* at 2 ranks, a GPU each
# (session 58's last launcher changes, 839f7bf, unrun), then s59-rs-split-x2.sh. ~6 minutes with the start.
#   EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s59-c1-x2.sh
FILTER="Overlap*" TLIMIT=200 T 2 1
eval "$(cat tools/steps/s59-rs-split-x2.sh)"
