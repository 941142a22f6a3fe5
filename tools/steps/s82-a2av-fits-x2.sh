# Session 82, call 7 (2 GPUs, ~290 s with the build): the pair form's verdict with the common case
# first (every warp of the SM's blocks walks the verdict, so its instruction count is issue slots
# they share: session 82's SASS, ~100 instructions between the stamps, 880 cycles for thread 0)
# against main (f724438), alternating, twice, with its stamps at 1 KiB; then the collective tests.
# Setup: branch fits checked out; tools/ab.sh prepare main && mv .deps/ab/main .deps/ab/base;
#   tools/ab.sh define nst fits SYMMEM_A2AV_STAMPS=1
A2AV_STAMPS nst
AAB a2av "base" all_to_all_v -b 8 -e 256K -f 8 -n 100
COLLTESTS
true
