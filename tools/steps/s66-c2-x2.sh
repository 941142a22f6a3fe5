# Steps for tools/call.sh on a 2-GPU machine (session 66, call 2): the instance noise of
# matmul_reduce_scatter (call 1: three identical instances of 70B mm+rs M 16384 read 5997, 6207 and
# 6169 us in one run, all_gather_matmul's within 0.9%). Four instances a column, both columns
# identical, each instance's SM clock now recorded (overlap_twins_mhz): is a slow instance slow at
# both M (an instance's property: its buffers) and at a lower clock (more bytes, more power)? Two
# processes of each, 70B and 8B, M 8192 and 16384. ~4 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s66-c2-x2.sh
for i in 1 2; do
  for md in 70B 8B; do
    O tw$md-$i SYMMEM_OVERLAP_TWINS=4 SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=2 SYMMEM_OVERLAP_MODELS=$md SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|rror"
    TW tw$md-$i
  done
done
O twag70 SYMMEM_OVERLAP_TWINS=4 SYMMEM_OVERLAP_OPS=ag SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_DEFER=2 SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|rror"
TW twag70
true
