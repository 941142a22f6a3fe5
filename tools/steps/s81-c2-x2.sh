# Session 81, call 2 (2 GPUs): where the grid's 0.36 us goes in all_to_all_v at 2 ranks (call 1: one
# block 4.26 us against the grid's 4.62 at 8 B - 4 KiB; the verdict's passes cost alike, so no
# fetch cost). Stamps with each block's start and end (globaltimer) for the grid (st) and one block
# (ost); the other blocks asleep 2 us before their header polls (nap: are their polls what slows
# block 0?); one block and 8 blocks beside the grid, alternating, twice; 8 blocks at 1-64 MiB.
# Trees: tools/ab.sh define {ost,st,nap,one,g8} s81-exp ... (see the call's summary in NOTES).
for t in st ost; do
  BIN=$t A "$t-1K" all_to_all_v -b 1K -e 1K -n 100
  grep 'a2av stamps' "$OUT/a.log" | tail -4
done
AAB a2av "nap one g8" all_to_all_v -b 8 -e 256K -f 8 -n 100
A big-work all_to_all_v -b 1M -e 64M -f 4 -n 20
BIN=g8 A big-g8 all_to_all_v -b 1M -e 64M -f 4 -n 20
true
