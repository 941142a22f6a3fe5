# Steps for tools/call.sh on a 2-GPU machine (session 73, call 5): the direct kernels' relaxed
# barrier arrivals (device::Arrival::kRelaxed: the first barrier of one_shot, two_shot,
# two_shot_push, reduce_scatter and the movement kernels but all_to_all_v, and the last one where a
# kernel only pulled) against 811a94f (.deps/ab/811a94f: every arrival a release), symmem-bench
# all_reduce / reduce_scatter / all_gather / broadcast 256 KiB - 16 MiB alternating, twice; then the
# GPU tests: every suite at 2 ranks on 2 GPUs and at 1 rank, the collectives at 4 and 3 ranks on 2
# GPUs, the Python GPU tier; then the README's main job. ~8 minutes with the start.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s73-c5-x2.sh
AAB ar 811a94f all_reduce -b 262144 -e 16777216 -f 2
AAB rs 811a94f reduce_scatter -b 262144 -e 16777216 -f 4
AAB ag 811a94f all_gather -b 262144 -e 16777216 -f 4
AAB bc 811a94f broadcast -b 262144 -e 16777216 -f 4
python3 - "$OUT/r" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*-*-[12].json"))):
    d = json.load(open(f))
    keys = [k for k in ("ll_us", "one_shot_us", "two_shot_us", "push_us", "direct_us", "two_shot_push_us") if any(k in r for r in d.get("rows", []))]
    print(os.path.basename(f)[:-5].ljust(16), " | ".join("%dK %s" % (r["bytes"] >> 10, " ".join("%s %.2f" % (k[:-3], r[k]) for k in keys if k in r))
          for r in d.get("rows", [])))
PY
TLIMIT=200 FILTER='*' T 2 1
FILTER='Collectives*:DeviceApi*:Stream*' T 4 2
FILTER='Collectives*:DeviceApi*' T 3 2
FILTER='*' T 1 1
cmake -S . -B build -DSYMMEM_BUILD_PYTHON=ON >> "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem_python symmem_python_files >> "$OUT/build.log" 2>&1 || echo "python build failed"
ctest --test-dir build -R "python_gpu_2gpus" --output-on-failure > "$OUT/suite.log" 2>&1
echo "== python_gpu_2gpus rc $? at $(el) s"; grep -E "tests passed|[0-9]+ passed|[0-9]+ failed" "$OUT/suite.log" | sort | uniq -c
MAINJOB 540
true
