#!/usr/bin/env bash
# This machine has nvcc but no cuobjdump or nvdisasm: a kernel's SASS is read on the device. Here,
#   tools/cubins.sh LABEL [FILE.cu...]     (default: the own GEMMs, src/overlap/hopper_gemm*.cu)
# compiles each file for sm_90a as the library does into .deps/sass/LABEL-<name>.cubin (ptxas's
# register and spill lines printed); a call's steps then run `S` (tools/call.sh), which writes
# every carried cubin's SASS into $OUT/sass.tgz with counts of its wgmma, R2UR and instructions.
# Carry [".deps"]; compile the baseline's cubins from its tree (e.g. after git stash) under
# another label.
set -euo pipefail
label=${1:?usage: tools/cubins.sh LABEL [FILE.cu...]}
shift
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(src/overlap/hopper_gemm.cu src/overlap/hopper_gemm_t.cu)
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p .deps/sass
for f in "${files[@]}"; do
  out=.deps/sass/$label-$(basename "$f" .cu).cubin
  "$NVCC" -DSYMMEM_BUILDING_LIBRARY -Iinclude -Isrc -O3 -DNDEBUG -arch=sm_90a -cubin --expt-relaxed-constexpr -std=c++17 -x cu "$f" \
    -o "$out" -Xptxas -v 2>&1 | grep -E "registers|spill" | sed "s|^|$(basename "$out"): |" || true
done
