# Steps for tools/call.sh on a 2-GPU machine (session 76, call 5, the final code): symmem-bench p2p
# at 8 B with the order table (now in its JSON), then the 1- and 2-GPU suite (SUITE12) and the
# debug-checks tier at 2 ranks on one GPU. ~9 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s76-c5-x2.sh
SYMMEM_BENCH_P2P_ORDER=1 P2P p2p-order-8 -b 8 -e 8
python3 -c "
import json; r = json.load(open('$OUT/r/p2p-order-8.json'))['rows'][0]
print('  order entries in the JSON: %d; put + release / acquire_polls_us %s' % (sum(k.startswith('order ') for k in r), r.get('order put + release / acquire_polls_us')))"
SUITE_STOP_S=500 SUITE12 "gpu_1rank|multigpu_2ranks_2gpus|multigpu_3ranks_2gpus|multigpu_fault_2ranks_2gpus|multigpu_own_gemm_2ranks_1gpu|multigpu_own_gemm_4ranks_2gpus|python_gpu_2gpus|python_example_tp_mlp_2gpus|multigpu_debug_checks_2ranks_1gpu"
true
