# Steps for tools/call.sh on a 2-GPU machine (session 80, call 2): session 80's all_to_all_v changes
# (the ticket by the last warp, short prefixes, the own split beside the polls) against f819301:
# the stamps of both at 1 KiB, then both alternating, twice, all_to_all_v 8 B - 256 KiB, and the
# LL kernels the ticket change touches (all_reduce, all_to_all at 8 B - 64 KiB); then the
# collective tests at 2 ranks.
#   tools/ab.sh prepare f819301; tools/ab.sh define stampsold f819301 SYMMEM_A2AV_STAMPS=1
#   tools/ab.sh define stampsnew <sha> SYMMEM_A2AV_STAMPS=1
#   COMMIT=<sha> bash tools/call.sh tools/steps/s80-c2-x2.sh
A2AV_STAMPS stampsold stampsnew  # (call.sh's helper since session 81: the loop this call ran)
AAB a2av "f819301" all_to_all_v -b 8 -e 256K -f 8 -n 100
AAB ar "f819301" all_reduce -b 8 -e 64K -f 8 -n 100
AAB a2a "f819301" all_to_all -b 8 -e 64K -f 8 -n 100
TLIMIT=200 FILTER='Collectives.*:Collectives/*:Rooted.*:DeviceApi.*' T 2 1
true
