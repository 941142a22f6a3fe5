# Steps for tools/call.sh on a 4-GPU machine (written in session 63, never run): the form choices
# session 63 made at 3+ ranks from the forms looped back on one GPU (kSumC at any shard count;
# detail::reduce_transposed takes 2048+-row blocks, detail::reduce_own_gemm 8B M 8192 at TP = 4).
# The reduce-scatter tests at 4 and 3 ranks (kSumC at 3-4 shards with real waits); then at TP = 4,
# M 8192 / 16384, both models: the own forms against the cuBLASLt ones (alt column
# SYMMEM_OVERLAP_GEMM=cublas: 8B M 8192's fused form against the sum form it replaced, 70B's
# against the ring / sum form), both ways round; the transposed tiles against hopper_gemm's
# (SYMMEM_OVERLAP_RS_GEMM_T=0 / SYMMEM_OVERLAP_GEMM_T=0), both ways round; the partials through
# the C slots against the stage ring (SYMMEM_OVERLAP_RS_SUM_RING=1); 70B mm+rs at raster 8 (session
# 64's detail::reduce_raster) against 2, both ways round; session 66's quiet waits
# (SYMMEM_OVERLAP_QUIET_NS=1000) against the default, both ways round. ~8.5 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s63-forms-x4.sh
F="Overlap.ReduceScatterFormsOneAfterAnother:Overlap.OwnGemm*ReduceScatter*:Overlap.GemmsWithCommunication*"
FILTER="$F" TLIMIT=120 T 4 1
FILTER="$F" TLIMIT=120 T 3 1
if tests_passed; then
  O own-vs-cublas SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM=cublas" | grep -E "^==|ag\\+mm|mm\\+rs"
  O cublas-vs-own SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_GEMM=cublas "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_GEMM=" | grep -E "^==|ag\\+mm|mm\\+rs"
  O t-vs-128 SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_GEMM_T=0;SYMMEM_OVERLAP_GEMM_T=0" | grep -E "^==|ag\\+mm|mm\\+rs"
  O 128-vs-t SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_RS_GEMM_T=0 SYMMEM_OVERLAP_GEMM_T=0 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_GEMM_T=;SYMMEM_OVERLAP_GEMM_T=" | grep -E "^==|ag\\+mm|mm\\+rs"
  O slots-vs-ring SYMMEM_OVERLAP_M=8192,16384 "SYMMEM_OVERLAP_ALT=SYMMEM_OVERLAP_RS_SUM_RING=1" | grep -E "^==|mm\\+rs"
  # (session 64: the fused forms' raster 8 at 70B, N 8192, against raster 2; one way round each)
  for first in 0 1; do
    O raster-first$first SYMMEM_OVERLAP_MODELS=70B SYMMEM_OVERLAP_OPS=rs SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_RS_RASTER=2" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|mm\\+rs"
  done
  # (session 66: the own GEMMs' signal waits as relaxed polls 1 us apart, SYMMEM_OVERLAP_QUIET_NS;
  # level at TP = 2, where the partials land long before they are summed; at TP = 4 the last
  # group's landing is on the path. Two instances a column, both ways round)
  for first in 0 1; do
    O quiet-first$first SYMMEM_OVERLAP_TWINS=2 SYMMEM_OVERLAP_M=8192,16384 SYMMEM_OVERLAP_ALT="SYMMEM_OVERLAP_QUIET_NS=1000" SYMMEM_OVERLAP_ALT_FIRST=$first | grep -E "^==|ag\\+mm|mm\\+rs"
    TW quiet-first$first
  done
fi
true
