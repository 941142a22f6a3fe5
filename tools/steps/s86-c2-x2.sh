# Session 86, call 2 (2 GPUs, ~410 s): the pair form of all_to_all_v with its lines spread over the
# grid (branch s86-a2av-spread, session 85's lead (2): the form keyed, not the size) against main,
# alternating, twice, at every size; then the 2-GPU tiers owed on main (call 1 ran the 1-GPU ones on
# one H200): 2 and 3 ranks on 2 GPUs and the fault tier.
# Setup: rm -rf .deps/ab/* && tools/ab.sh prepare s86-a2av-spread; COMMIT=<sha> bash tools/call.sh
#   tools/steps/s86-c2-x2.sh (carry [".deps"])
AAB a2av "s86-a2av-spread" all_to_all_v -b 8 -e 1M -f 2 -n 100
SUITE_STOP_S=300 SUITE12 "multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus"
true
