# Steps for tools/call.sh on a 2-GPU machine (session 66's last call on the final library code,
# where no 4-GPU kind came): the GPU suite's 1- and 2-GPU tiers (ctest gpu_1rank,
# multigpu_2ranks_2gpus, the fault tier, the own GEMM's forms at 2 ranks on 1 GPU and 4 on 2,
# python_gpu_2gpus, the tensor-parallel example; the own GEMMs' waits now through
# hopper_wait_signal, SYMMEM_OVERLAP_QUIET_NS unset), stopped after 250 s; then the README's main
# job, symmem-bench with no suite (p2p and the collectives against NCCL). ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s66-c5-x2.sh
SUITE12
echo "== symmem-bench (the main job) at $(el) s"
timeout 150 build/bench/symmem-bench --kind "$kind" --commit "$C" --json "$OUT/r/main-job.json" > "$OUT/main-job.log" 2>&1
echo "rc $? at $(el) s"; grep -vE "^\[rank [1-9]" "$OUT/main-job.log" | grep -E "^#|^ +[0-9]+ " | head -80
true
