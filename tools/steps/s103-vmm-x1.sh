# tools/vmm_sanitizer_probe.cu under initcheck and memcheck, its cuMem* calls linked and through
# the runtime's entry points (as the heap's). Session 103 (nvidia-h200, compute-sanitizer
# 2025.3.1): under initcheck, both ways, the cudaMemset of the cuMemMap'd memory whose handle was
# exported as a file descriptor failed with "unspecified launch failure" and no report ("ERROR
# SUMMARY: 0 errors"); the same steps without the export (e3155b5's parent) all ran; memcheck ran
# every step both ways. initcheck cannot follow symmem's heap, whose memory is always exported.
# No symmem build (~2 minutes of device time with the start):
#   bash tools/steps/s103-vmm-x1.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CSAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
P=/tmp/vmm-probe
"$NVCC" -std=c++17 -arch=sm_90 -lcuda -o $P tools/vmm_sanitizer_probe.cu || exit 1
for mode in linked entry; do
  a=; [ $mode = entry ] && a=entry
  echo "== plain, $mode"; timeout 30 $P $a | tail -2
  for tool in initcheck memcheck; do
    echo "== $tool, $mode"
    timeout 60 "$CSAN" --tool $tool --error-exitcode 9 $P $a 2>&1 | grep -av "^=========$" | grep -av " ok$" | head -12
    echo "== rc ${PIPESTATUS[0]}"
  done
done
