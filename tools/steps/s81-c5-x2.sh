# Session 81, call 5 (2 GPUs): all_to_all_v's ticket after the counts' barrier (the work tree,
# seq_take_ticket) and before the header barrier (p2: branch of the same name) against seq_begin's
# (base: 5fcb3bf), alternating, twice; the direct sizes once each (the ticket's move should not
# show there). Then the collective tests on the work tree at 1, 2 and 3 ranks, 2 ranks on one GPU,
# 4 on 2 GPUs, and the debug checks' tier's collectives.
AAB a2av "base p2" all_to_all_v -b 8 -e 256K -f 8 -n 100
A big-work all_to_all_v -b 1M -e 64M -f 4 -n 20
BIN=base A big-base all_to_all_v -b 1M -e 64M -f 4 -n 20
export FILTER="Collectives.*:Collectives/*:Rooted.*:Stream.*:DeviceApi.*"
T 1 1
T 2 1
T 3 2
T 2 2
TLIMIT=200 T 4 2 SYMMEM_TIMEOUT_MS=100000
FILTER="DebugChecks.*:Collectives.*:Collectives/*:Rooted.*" T 2 2 SYMMEM_DEBUG_CHECKS=1
true
