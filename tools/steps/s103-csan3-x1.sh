# What session 103's compute-sanitizer runs left open (one GPU, the -lineinfo build of s103-owed-x1.sh):
# (1) initcheck stopped at the heap's first cudaMemset with "unspecified launch failure" and no
# report: tools/vmm_sanitizer_probe.cu takes the same steps on cudaMalloc'd and on cuMemMap'd memory,
# plain and under each tool, to tell the tool's limit from symmem's fault. (2) racecheck of the own
# GEMMs, with cuBLASLt's kernels excluded (--kernel-name-exclude kns=nvjet), stopped at the first
# test's cuBLASLt reference with "Internal Sanitizer Error: The Sanitizer failed to handle a hardware
# exception": here the own GEMMs alone (OwnGemmRowShardsOnOneGpu calls no cuBLASLt), then the first
# test again without the exclusion.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo bash tools/call.sh tools/steps/s103-csan3-x1.sh
. tools/steps/csan.sh
"$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -std=c++17 -arch=sm_90 -lcuda -o $OUT/vmm-probe tools/vmm_sanitizer_probe.cu > $OUT/vmm-probe-build.log 2>&1 || cat $OUT/vmm-probe-build.log
for tool in none initcheck memcheck racecheck; do
  echo "== vmm-probe under $tool"
  if [ $tool = none ]; then timeout 30 $OUT/vmm-probe; else timeout 60 "$CSAN" --tool $tool --error-exitcode 9 $OUT/vmm-probe; fi 2>&1 | grep -av "^=========$" | head -20
  echo "== rc ${PIPESTATUS[0]}"
done
rm -f $OUT/vmm-probe
t=$(L 120) && CS racecheck 1 'Overlap.OwnGemmRowShardsOnOneGpu' $t --racecheck-report hazard
t=$(L 150) && CS racecheck 1 'Overlap.OwnGemmAllGatherMatchesTheReference' $t --racecheck-report hazard
true
