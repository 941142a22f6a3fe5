# The Python GPU suite with the extension under AddressSanitizer and UBSan (one GPU, 2 and 3 ranks),
# libasan and libubsan preloaded into python (torch's own code is not instrumented; its allocations
# go through the interceptors). Session 101 ran the package's host tier so; this is the suite on
# the GPU (~2 minutes of build after a Release tree, ~3 of tests).
#   COMMIT=<sha> WORK_TARGETS=symmem-run CMAKE_ARGS=-DSYMMEM_SANITIZE=address bash tools/call.sh tools/steps/s102-pyasan-x1.sh
export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0
grep -c "fsanitize=address" build/build.ninja | sed 's/^/== ninja lines with -fsanitize=address: /'
PYBUILD
pre="$(/usr/bin/g++ -print-file-name=libasan.so):$(/usr/bin/g++ -print-file-name=libubsan.so)"
echo "== preloading $pre"
pysan() { grep -a "runtime error\|ERROR: AddressSanitizer\|SUMMARY: \|#[0-9] 0x.* in symmem" "$OUT/$1.log" | sed -E 's/^\[rank [0-9]+\] //' | sort | uniq -c | sort -rn | cut -c1-300 | head -12; }
t=$(L 200) && ( export LD_PRELOAD=$pre; PYN pyasan_2 2 "$t" test_gpu.py ); pysan pyasan_2
t=$(L 200) && ( export LD_PRELOAD=$pre; PYN pyasan_3 3 "$t" test_gpu.py ); pysan pyasan_3
true
