# Prepared in session 86 for 2 GPUs (not run: only one H200 was lent all session), ~410 s: the pair
# form of all_to_all_v with its lines spread over the grid (tools/steps/s86-a2av-spread.patch,
# session 85's lead (2): the form keyed, not the size) against the work tree, alternating, twice, at
# every size; then the 2-GPU tiers owed on main since session 85 (session 86 ran the 1-GPU ones on
# one H200): 2 and 3 ranks on 2 GPUs and the fault tier.
# Setup: rm -rf .deps/ab/* && git checkout -b a2av-spread && git am tools/steps/s86-a2av-spread.patch
#   && git checkout - && tools/ab.sh prepare a2av-spread; then (the name below is the tree's)
#   COMMIT=<sha> bash tools/call.sh tools/steps/s86-c2-x2.sh (carry [".deps"])
AAB a2av "a2av-spread" all_to_all_v -b 8 -e 1M -f 2 -n 100
SUITE_STOP_S=300 SUITE12 "multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus"
true
