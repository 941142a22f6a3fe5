# Session 84, call 3 (2 GPUs, timing only, ~200 s): call 2's early send line with its counts loaded
# by warp 0 alone (lanes 0-1 put them in shared memory before seq_begin's barrier, which the
# patched seq_begin runs a hook before) instead of by every thread (call 2: 0.45 us slower, the
# counts phase +470-870 cycles), and the a2av_problem dedup (call 2: passed the collective tests at
# 1-4 ranks). Against main, alternating, twice; the stamps at 1 KiB.
# Setup, here: rm -rf .deps/ab/*; tools/ab.sh prepare main; tools/ab.sh define est preb SYMMEM_A2AV_STAMPS=1;
#   WORK_TARGETS=symmem-bench COMMIT=<preb> bash tools/call.sh tools/steps/s84-a2av-preb-x2.sh
A2AV_STAMPS est
AAB a2av "main" all_to_all_v -b 8 -e 2M -f 8 -n 200
AAB a2avb "main" all_to_all_v -b 128K -e 1M -f 2 -n 200
true
