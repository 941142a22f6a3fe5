# Steps for tools/call.sh on a 2-GPU machine (session 75, call 4): NVSHMEM's one-sided primitives
# beside symmem's once more on the final code (the LL ping-pong from a grid above 32 lines; JSON
# r/p2p-*-1.json), then the 1- and 2-GPU suite (SUITE12). ~9.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s75-c4-x2.sh
NVSHMEM_PAIRS=1 COMMIT=$C OUT=$OUT bash tools/peers.sh nvshmem -e 16M  # (one pair: the suite needs the time)
echo "== nvshmem rc $? at $(el) s"
SUITE12
true
