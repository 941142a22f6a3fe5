# Prepared in session 83 for the next (2 GPUs, ~350 s with the builds of four trees; not run yet): all_to_all_v's
# early data line (session 83, 8a48200: 0.04-0.19 us less at 8 B - 128 KiB, 0.01-0.11 more at
# 256 KiB - 2 MiB) loaded only where this rank's own split for the peer is at most
# SYMMEM_A2AV_EARLY_MAX_BYTES (64 KiB; tools/steps/s84-a2av-gate.patch). The test is a register
# compare decided in the send phase, before the header barrier: every thread still loads at the
# small sizes (as 8a48200, whose gated-after-the-verdict variants were slower), none at the large.
# Expect main's times to 128 KiB (bench size; 64 KiB a peer) and base's (3a00009) above. Against
# main and 3a00009, alternating, twice (8 B - 2 MiB and 128 KiB - 1 MiB), a tree at 128 KiB too,
# the stamps at 1 KiB, then the collective tests at 1-4 ranks (2 GPUs), 2 on one GPU and the
# debug checks. Merge it if it is no slower than main to 128 KiB and no slower than 3a00009 from
# 256 KiB, then run the final suite (s79-c5 then s79-c6).
# First, here (on main):
#   rm -rf .deps/ab/* .deps/sass
#   git branch -f gate HEAD && git checkout -q gate && git apply tools/steps/s84-a2av-gate.patch &&
#     git commit -qam "all_to_all_v: the early data line only where this rank's own split is small (experiment)"
#   tools/ab.sh prepare main && tools/ab.sh prepare 3a00009 && mv .deps/ab/3a00009 .deps/ab/old
#   tools/ab.sh define g128 gate SYMMEM_A2AV_EARLY_MAX_BYTES=131072
#   tools/ab.sh define est gate SYMMEM_A2AV_STAMPS=1
#   COMMIT=<gate's sha> bash tools/call.sh tools/steps/s84-a2av-gate-x2.sh   (carry [".deps"], nvidia-h200-x2)
A2AV_STAMPS est
AAB a2av "main old g128" all_to_all_v -b 8 -e 2M -f 8 -n 200
AAB a2avb "main old g128" all_to_all_v -b 128K -e 1M -f 2 -n 200
COLLTESTS
true
