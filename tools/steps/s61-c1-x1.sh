# Steps for tools/call.sh on a 1-GPU machine (session 61, call 1): the own GEMMs' warpgroup index
# read through a shuffle (ptx::warpgroup_index: the compiler then knows the roles' branches are
# warp-uniform) against the tree before (.deps/ab/base: tools/ab.sh prepare HEAD,
# AB_TARGETS=symmem-hgemm-probe). The SASS of both trees' kernels (cubins compiled here, carried in
# .deps/sass/) into $OUT/sass.tgz; then the probe's check and time (hopper_gemm, hopper_gemm_t
# against cuBLASLt) at 8B mm+rs's and 70B's GEMM shapes, alternating trees, three times. ~4 minutes.
#   AB_TARGETS=symmem-hgemm-probe EXTRA_TARGETS=symmem-hgemm-probe COMMIT=<sha> bash tools/call.sh tools/steps/s61-c1-x1.sh
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
mkdir -p "$OUT/sass"
for f in .deps/sass/*.cubin; do "$CUOBJ" -sass "$f" > "$OUT/sass/$(basename "$f" .cubin).sass" 2>&1; done
for f in "$OUT"/sass/*.sass; do echo "$(basename "$f"): $(grep -c HGMMA "$f") HGMMA, $(grep -c R2UR "$f") R2UR, $(grep -cE '^ +/\*[0-9a-f]{4}\*/' "$f") instructions"; done
tar czf "$OUT/sass.tgz" -C "$OUT" sass && rm -rf "$OUT/sass"
for i in 1 2 3; do
  for s in "16384 4096 7168" "8192 8192 14336"; do
    HGEMM_T=1 PB build/symmem-hgemm-probe new-$i $s 2 8 10
    HGEMM_T=1 PB .deps/ab/base/build-ab/symmem-hgemm-probe base-$i $s 2 8 10
  done
done
true
