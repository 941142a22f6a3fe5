# Steps for tools/call.sh on a 1-GPU machine (session 67, call 6): is the own GEMMs' loss to
# cuBLASLt at boost clocks (call 5: 1.07-1.13x at 8B's M 8192 shapes after a near-idle millisecond)
# their last partial wave? M 8192 against 8448 (33 rows of 256-row units: whole waves of 66
# clusters at N 4096 (528 units) and N 7168 (924)), whole GEMMs (no shards), graphs of 3 in turn,
# after idle and back to back. cuBLASLt's plan there (tile 24, 256 x 128) meets the same waves.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s67-c6-x1.sh
for idle in 1000 0; do
  for s in "8192 4096 7168" "8448 4096 7168" "8192 7168 4096" "8448 7168 4096"; do
    PR waves SYMMEM_BENCH_IDLE_US=$idle $s 2 8 15
  done
done
true
