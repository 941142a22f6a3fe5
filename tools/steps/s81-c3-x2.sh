# Session 81, call 3 (2 GPUs): call 2 found 8 blocks as slow as 132 (4.65 against 4.62 us) and one
# block 0.31 us faster, block 0's phases 408 cycles longer in the grid: is it the ticket (seq_begin's
# barrier and release add)? Trees (tools/ab.sh define NAME s81-exp ...): one (one block), g2 (two
# blocks), rlx (the ticket's add relaxed: its fence), nt (no barrier, no ticket, block 0 raises the
# epoch: racy, a diagnostic only), ntst (nt with the stamps).
AAB a2av "one g2 rlx nt" all_to_all_v -b 8 -e 256K -f 8 -n 100
BIN=ntst A "ntst-1K" all_to_all_v -b 1K -e 1K -n 100
grep 'a2av stamps' "$OUT/a.log" | tail -4
true
