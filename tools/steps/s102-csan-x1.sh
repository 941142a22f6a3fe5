# The GPU binary's kernels under compute-sanitizer (one GPU; never run before session 102):
# memcheck (out-of-bounds and misaligned global, shared and local accesses, device faults, CUDA API
# errors) at 1 rank on every suite but the fault tests, then at 2 ranks on one GPU (every rank's
# process under its own sanitizer: peers' memory mapped through the heap's cuMem imports).
# Build with line numbers: CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo.
#   COMMIT=<sha> WORK_TARGETS="symmem_gpu_tests symmem-run" CMAKE_ARGS=-DCMAKE_CUDA_FLAGS=-lineinfo bash tools/call.sh tools/steps/s102-csan-x1.sh
# (carry [".deps/googletest", ".deps/anchors"]). s102-csan2-x1.sh runs racecheck, synccheck and initcheck.
. tools/steps/csan.sh
t=$(L 200) && CS memcheck 1 '-Fault.*' $t
t=$(L 170) && CS memcheck 2 'Heap.*:Collectives.*:Rooted.*:AllToAllV.*:DeviceApi.*:DeviceAtomics.*:Stream.*:Moe.DispatchCombineBf16:Overlap.GemmsWithCommunicationMatchTheReference' $t
true
