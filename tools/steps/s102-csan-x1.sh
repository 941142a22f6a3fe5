# The GPU binary's kernels under compute-sanitizer's memcheck (one GPU; first run in session 102):
# out-of-bounds and misaligned global, shared and local accesses, device faults, CUDA API errors.
# A kernel memcheck stops leaves the process's CUDA context broken, so the suites run in groups
# (an error costs its group only): at 1 rank, then at 2 ranks on one GPU (every rank's process
# under its own sanitizer; peers' memory mapped through the heap's cuMem imports).
# Build with line numbers: CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo bash tools/call.sh tools/steps/s102-csan-x1.sh
# (carry [".deps/googletest", ".deps/anchors"]). s102-csan2-x1.sh runs MoE and overlap, and the other tools.
. tools/steps/csan.sh
t=$(L 100) && CS memcheck 1 'Heap.*:ContextSetup.*:DeviceApi.*:DeviceAtomics.*:Stream.*:Threads.*' $t
t=$(L 100) && CS memcheck 1 'Collectives*:Rooted.*:Random.*' $t
t=$(L 120) && CS memcheck 2 'Heap.*:DeviceApi.*:DeviceAtomics.*:Stream.*' $t
t=$(L 120) && CS memcheck 2 'Collectives*:Rooted.*' $t
true
