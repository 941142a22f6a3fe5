# Steps for tools/call.sh on a 2-GPU machine (session 80, call 5, run at 16a7301: the macro exists
# only there; it changed nothing and was taken out): SYMMEM_PREFETCH_ARGS (launch.cuh,
# an experiment off by default) against the default build: all_to_all_v's stamps without (st) and
# with (pfst) at 1 KiB, then the default against pf alternating, twice: all_to_all_v 8 B - 256 KiB,
# all_reduce and all_to_all 8 B - 64 KiB at 2 ranks (symmem-bench checks every result).
#   tools/ab.sh define pf <sha> SYMMEM_PREFETCH_ARGS=1
#   tools/ab.sh define pfst <sha> SYMMEM_PREFETCH_ARGS=1 SYMMEM_A2AV_STAMPS=1
#   tools/ab.sh define st <sha> SYMMEM_A2AV_STAMPS=1
#   COMMIT=<sha> bash tools/call.sh tools/steps/s80-c5-x2.sh
A2AV_STAMPS st pfst  # (call.sh's helper since session 81: the loop this call ran)
AAB a2av "pf" all_to_all_v -b 8 -e 256K -f 8 -n 100
AAB ar "pf" all_reduce -b 8 -e 64K -f 8 -n 100
AAB a2a "pf" all_to_all -b 8 -e 64K -f 8 -n 100
true
