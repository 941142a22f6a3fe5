# Steps for tools/call.sh on a 2-GPU machine (session 76, call 1): put_signal's signal address read
# before its copy (the work tree) against dbf7abe (.deps/ab/base) and against the same change with
# the handle's tables read through the read-only path, __ldg (.deps/ab/ldg): symmem-bench p2p 8 B -
# 64 KiB, the three trees alternating, twice (put_signal_us beside put_then_release_us, which
# keeps the old order in every tree); then NVSHMEM's pair on the work tree (tools/peers.sh
# nvshmem); then the debug-checks tier at 2 ranks on one GPU whole (not run whole since session
# 75's poison() fix). ~6 minutes with the start.
#   tools/ab.sh prepare dbf7abe (as base), a commit with __ldg (as ldg); then
#   COMMIT=<sha> bash tools/call.sh tools/steps/s76-c1-x2.sh
for i in 1 2; do
  P2P "p2p-work-$i" -b 8 -e 64K
  BIN=base P2P "p2p-base-$i" -b 8 -e 64K
  BIN=ldg P2P "p2p-ldg-$i" -b 8 -e 64K
done
COMMIT=$C OUT=$OUT bash tools/peers.sh nvshmem -b 8 -e 64K
echo "== nvshmem rc $? at $(el) s"
for i in 1 2; do python3 -c "
import json; d = json.load(open('$OUT/r/p2p-vs-nvshmem-$i.json'))
print('  put_signal ' + ' '.join('%d:%.2f/%.2f' % (r['bytes'], r['symmem_us'], r['nvshmem_us']) for r in d['ratios'] if r['op'] == 'p2p_latency' and r['algo'] == 'put_signal'))"; done
SUITE_STOP_S=300 SUITE12 "multigpu_debug_checks_2ranks_1gpu"
true
