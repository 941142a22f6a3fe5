# Session 88, call 2 (one GPU, ~450 s): symmem built with CMAKE_CUDA_ARCHITECTURES=80-virtual (compute_80
# PTX only, as a build for A100s; the own Hopper GEMM stays sm_90a), run on the H200 through the
# driver's JIT: every kernel family's pre-Hopper code (no griddepcontrol, no bulk-copy unit) on real
# hardware, and the Context's warning. Before session 88 such a build did not compile (kBulkStages
# hidden from host code in the sm_80 pass), and PDL would have launched kernels that have no
# griddepcontrol.wait. gpu_1rank first (one process: the JIT cache fills), then 2 ranks on the GPU.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s88-c2-x1.sh (carry [".deps/googletest"]; WORK_TARGETS=symmem-run)
B80=$PWD/build80
export CUDA_CACHE_PATH=$PWD/.nvcache CUDA_CACHE_MAXSIZE=4294967296
cmake -S . -B "$B80" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_GTEST_SOURCE="$PWD/.deps/googletest" -DSYMMEM_BUILD_PYTHON=OFF \
  -DSYMMEM_BUILD_BENCH=OFF -DSYMMEM_BUILD_EXAMPLES=OFF -DCMAKE_CUDA_ARCHITECTURES=80-virtual > "$OUT/build80.log" 2>&1 &&
  cmake --build "$B80" -j "$(nproc)" --target symmem_gpu_tests symmem-run >> "$OUT/build80.log" 2>&1 || { tail -30 "$OUT/build80.log"; exit 1; }
echo "== built80 at $(el) s"
t80() {  # label ranks filter: the sm_80-code tests, bounded
  local label=$1 n=$2 f=$3
  echo "== $label at $(el) s"
  timeout "${T80:-200}" env SYMMEM_DEBUG=WARN SYMMEM_TIMEOUT_MS=120000 "$B80/symmem-run" -n "$n" --ranks-per-gpu "$n" \
    "$B80/tests/symmem_gpu_tests" --gtest_filter="$f" > "$OUT/$label.log" 2>&1
  echo "rc $?"; grep -E "WARN|\[  PASSED  \]|\[  FAILED  \]|tests ran" "$OUT/$label.log" | sort | uniq -c | head -12
}
T80=260 t80 g80-1rank 1 "-Fault.*"
T80=240 t80 g80-2ranks 2 "-Fault.*:Overlap.*"
true
