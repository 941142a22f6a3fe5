# Session 84, call 2 (2 GPUs, ~300 s): all_to_all_v's pair form loads its first send line (this
# rank's split for the peer, line idx) between seq_begin and the counts' barrier (8eb43ed, tree pr),
# and the problem ranking written once (a2av_problem, d7c3d0b = the work tree: both changes).
# Against main, alternating, twice (8 B - 2 MiB, 128 KiB - 1 MiB), the stamps at 1 KiB, then the
# collective tests at 1-4 ranks (2 GPUs; the general form at 3 and 4), 2 on one GPU, the debug checks.
# Setup, here:  rm -rf .deps/ab/*; tools/ab.sh prepare main; tools/ab.sh prepare 8eb43ed && mv .deps/ab/8eb43ed .deps/ab/pr;
#   tools/ab.sh define est <branch at d7c3d0b> SYMMEM_A2AV_STAMPS=1;  COMMIT=d7c3d0b bash tools/call.sh tools/steps/s84-a2av-pre-x2.sh
A2AV_STAMPS est
AAB a2av "main pr" all_to_all_v -b 8 -e 2M -f 8 -n 200
AAB a2avb "main pr" all_to_all_v -b 128K -e 1M -f 2 -n 200
COLLTESTS
true
