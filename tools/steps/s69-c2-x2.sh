# Steps for tools/call.sh on a 2-GPU machine (session 69's last call, the final code): (1) the 1-
# and 2-GPU suite (as s68-c6-x2.sh: every tier a 2-GPU machine runs, the Python and fault tiers
# included), stopped after SUITE_STOP_S (440 s since session 72: 3 ranks on 2 GPUs added); (2) the README's main job (symmem-bench, p2p and the
# collectives beside NCCL) where time is left. ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s69-c2-x2.sh
SUITE12
MAINJOB
true
