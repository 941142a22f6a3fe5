# Steps for tools/call.sh on a 2-GPU machine (session 75, call 1): NVSHMEM's one-sided primitives
# beside symmem's (tools/peers.sh nvshmem: bench/peers/nvshmem_p2p.cu built against PyTorch's
# NVSHMEM wheel, then symmem-bench p2p and nvshmem-p2p 8 B - 16 MiB, twice, both ways round, each
# pair compared by bench/peers/compare_p2p.py). ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s75-c1-x2.sh
COMMIT=$C OUT=$OUT bash tools/peers.sh nvshmem -e 16M
echo "== nvshmem rc $? at $(el) s"
true
