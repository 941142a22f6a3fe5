# Steps for tools/call.sh on a 2-GPU machine (session 77, call 1): copy_bytes' 16-byte path with
# its head copied last (the work tree) against 91c7db8 (.deps/ab/base): symmem-bench p2p 8 B -
# 64 KiB alternating, twice; NVSHMEM's pair once; the MoE decode phase trace at 2 GPUs
# (SYMMEM_MOE_TRACE=1, uniform and skewed; not taken since session 40); then the device API and
# collectives tests at 2 ranks on 2 GPUs (every copy_bytes caller). ~5 minutes with the start.
#   tools/ab.sh prepare 91c7db8 (as base); COMMIT=<sha> bash tools/call.sh tools/steps/s77-c1-x2.sh
for i in 1 2; do
  P2P "p2p-work-$i" -b 8 -e 64K
  BIN=base P2P "p2p-base-$i" -b 8 -e 64K
done
NVSH -b 8 -e 64K
B moe-trace decode,pplx_256e_1t,pplx_64e_32t SYMMEM_MOE_TRACE=1
B moe-plain decode,pplx_256e_1t,pplx_64e_32t
TLIMIT=240 FILTER='DeviceApi*:Collectives*:Stream*' T 2 1
true
