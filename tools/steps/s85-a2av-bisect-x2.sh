# Prepared in session 84 for the next (2 GPUs, timing only, ~250 s with five trees to build; not run yet;
# its setup below dry-run in a clone in session 84): why session 84's
# early send line made all_to_all_v at 2 ranks 0.45-0.83 us slower. Its stamps (calls 2-3, each
# beside main's times but not main's stamps) had the counts phase 1286-1403 cycles on block 0 and
# 884-1072 on block 131, which loads no payload at 1 KiB, against main's ~410 (session 83's and
# call 1's stamps, other binaries). This call takes the stamps of main, of the early line (preb:
# tools/steps/s84-a2av-preb.patch) and of the same code with the payload's load never taken (nol:
# s85-a2av-preb-noload.patch, `&& es == 0`) in one call, and their times beside main's:
#   nol as slow as preb: the cost is the counts published through seq_begin's barrier and the
#     test's code, not the load (then look at the SASS: tools/cubins.sh, the `S` step);
#   nol as fast as main: the load itself (its bytes in flight under the counts' barrier).
# Setup, here (on main):
#   rm -rf .deps/ab/* .deps/sass
#   for v in preb:s84-a2av-preb nol:s85-a2av-preb-noload; do b=${v%%:*}; git branch -f $b HEAD &&
#     git checkout -q $b && git apply tools/steps/${v#*:}.patch && git commit -qam "$b (experiment)" && git checkout -q main; done
#   tools/ab.sh prepare preb && tools/ab.sh prepare nol
#   tools/ab.sh define estm main SYMMEM_A2AV_STAMPS=1; tools/ab.sh define estp preb SYMMEM_A2AV_STAMPS=1
#   tools/ab.sh define estn nol SYMMEM_A2AV_STAMPS=1
#   WORK_TARGETS=symmem-bench COMMIT=<main> bash tools/call.sh tools/steps/s85-a2av-bisect-x2.sh  (carry [".deps"], nvidia-h200-x2)
A2AV_STAMPS estm estp estn
AAB a2av "preb nol" all_to_all_v -b 8 -e 2M -f 8 -n 200
true
