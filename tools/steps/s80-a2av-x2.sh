# Steps for tools/call.sh on a 2-GPU machine (prepared in session 79 for the next session, not run):
# are all_to_all_v's fixed phase costs the 132-block grid's (every SM fetching the kernel's code
# and parameters at once) or the kernel's? The stamps with the whole grid (.deps/ab/stamps) and with
# one block (.deps/ab/stamps1) at 1 KiB; one block (.deps/ab/one) against the work tree
# alternating, twice, 8 B - 256 KiB (where every split is small, so one block is correct); then
# the collective and rooted tests at 2 ranks (session 79's last review commit) and the three tiers
# session 79 could not run on its final code. ~9 minutes with the start.
#   tools/ab.sh define stamps 9e0fc9f SYMMEM_A2AV_STAMPS=1
#   tools/ab.sh define stamps1 9e0fc9f SYMMEM_A2AV_STAMPS=1 SYMMEM_A2AV_MAX_BLOCKS=1
#   tools/ab.sh define one 9e0fc9f SYMMEM_A2AV_MAX_BLOCKS=1
#   COMMIT=<sha> bash tools/call.sh tools/steps/s80-a2av-x2.sh
for t in stamps stamps1; do
  BIN=$t A "$t-1K" all_to_all_v -b 1K -e 1K -n 100
  grep 'a2av stamps' "$OUT/a.log" | tail -4
done
AAB a2av "one" all_to_all_v -b 8 -e 256K -f 8 -n 100
TLIMIT=240 FILTER='Collectives.*:Collectives/*:Rooted.*' T 2 1
SUITE_STOP_S=300 SUITE12 "multigpu_own_gemm_4ranks_2gpus|python_gpu_2ranks_1gpu|python_example_tp_mlp_2gpus"
true
