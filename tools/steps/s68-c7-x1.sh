# Steps for tools/call.sh on a 1-GPU machine (session 68, call 7): where hopper_gemm_t's dynamic
# schedule spends its 2-5% more cycles (call 4: 1894 K -> 1981 K at 16384 x 7168 x 4096). Nsight
# Compute's warp stall samples by instruction for the static kernel and the dynamic one (their two
# check launches), the top instructions of each and the stall totals by kind. ~3 minutes.
#   COMMIT=<sha> EXTRA_TARGETS=symmem-hgemm-probe bash tools/call.sh tools/steps/s68-c7-x1.sh
# (Since session 69 through call.sh's NSRC helper.)
NCU_K=hopper_gemm_t NSRC s HGEMM_SUSTAIN=0 HGEMM_T_DYN=1 16384 7168 4096 2 8 2
true
