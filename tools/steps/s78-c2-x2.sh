# Steps for tools/call.sh on a 2-GPU machine (session 78, call 2): the rooted collectives (reduce,
# gather, scatter): their tests at 2 ranks on 2 GPUs, 1 rank, 3 ranks on 2 GPUs and 2 ranks on one
# GPU under SYMMEM_DEBUG_CHECKS=1; then, where they passed, symmem-bench of each beside NCCL
# (every algorithm that runs, graph replays). ~7 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s78-c2-x2.sh
TLIMIT=240 FILTER='Rooted.*' T 2 1
TLIMIT=120 FILTER='Rooted.*' T 1 1
TLIMIT=200 FILTER='Rooted.*' T 3 2
TLIMIT=200 FILTER='Rooted.*' T 2 2 SYMMEM_DEBUG_CHECKS=1
if tests_passed; then
  A reduce reduce -b 8 -e 256M -f 4
  A gather gather -b 64 -e 256M -f 4
  A scatter scatter -b 64 -e 256M -f 4
  A reduce-f64 reduce -b 64K -e 4M -f 2 -d double
fi
true
