# Steps for tools/call.sh on a 2-GPU machine (session 75, call 3): device::signal_relaxed and
# device::ll_get (the device API's new pair to ll_put): DeviceApi.* at 2 ranks on 2 GPUs and on one,
# then NVSHMEM's one-sided primitives beside symmem's (tools/peers.sh nvshmem, 8 B - 16 MiB, twice,
# both ways round; symmem's LL put and relaxed signal now in the comparison). ~4 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s75-c3-x2.sh
FILTER='DeviceApi.*' T 2 1
FILTER='DeviceApi.*' T 2 2
tests_passed && { COMMIT=$C OUT=$OUT bash tools/peers.sh nvshmem -e 16M; echo "== nvshmem rc $? at $(el) s"; }
true
