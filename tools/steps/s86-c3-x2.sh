# Prepared in session 86 for 2 GPUs (not run: no 2-GPU kind was lent), right after s86-c2-x2.sh on
# the warm machine, ~300 s: the rest of the 2-GPU suite owed on main (the 4-rank own-GEMM tier, the Python tiers at 2 GPUs, the TP MLP
# example), then the README's main job. (COLLTESTS first where the call's tree changed a kernel.)
#   COMMIT=<sha> bash tools/call.sh tools/steps/s86-c3-x2.sh (carry [".deps"])
SUITE_STOP_S=360 SUITE12 "multigpu_own_gemm_4ranks_2gpus|python_gpu_2gpus|python_example_tp_mlp_2gpus"
MAINJOB 540
true
