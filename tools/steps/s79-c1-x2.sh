# Steps for tools/call.sh on a 2-GPU machine (session 79, call 1): session 78's last review commit
# (root_only_in / root_only_out) under the rooted and collective tests at 2 ranks on 2 GPUs, and at
# 2 on one GPU with the debug checks; the relaxed waits (wait_signal_relaxed, wait_word_relaxed)
# under the device API and fault tests; then symmem-bench p2p's signal rows with the relaxed pair,
# three runs, and NVSHMEM's pair once. ~6 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s79-c1-x2.sh
TLIMIT=300 FILTER='Rooted.*:Collectives.*:DeviceApi.*:Fault.Unmet*' T 2 1
TLIMIT=240 FILTER='Rooted.*:Collectives.*:DeviceApi.*' T 2 2 SYMMEM_DEBUG_CHECKS=1
for i in 1 2 3; do P2P "p2p-$i" -b 8 -e 4K; done
NVSH -b 8 -e 4K
true
