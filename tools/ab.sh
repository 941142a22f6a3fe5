#!/usr/bin/env bash
# A/B timing of two commits on one GPU machine, in one device call (each call may land on another
# machine kind, so a baseline only counts when it is measured beside the change).
#
# Here (with git):   tools/ab.sh prepare REF     exports REF's tree into .deps/ab/REF (ignored; every
#                                                tree left in .deps/ab is built and timed: clear old ones)
#                    tools/ab.sh define NAME REF MACRO=VALUE...   the same as .deps/ab/NAME, built with
#                                                those compile definitions (a header's #ifndef settings)
# On the device:     tools/ab.sh run [SUITE...]  builds the working tree and every .deps/ab/* tree,
#                    then runs `symmem-bench SUITE` (default: all_reduce) with each, alternating
#                    trees per suite, JSON and logs as <suite>-<tree>.json in $OUT/ab-<time>.tgz
#                    (SYMMEM_AB_ARGS: more symmem-bench flags, e.g. "-e 1048576").
# Carry [".deps"] in the device call. Multicast stays off in every child (lib.sh).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cmd=${1:-}
shift || true
case "$cmd" in
  prepare|define)
    # define NAME REF MACRO=VALUE...: REF's tree as NAME with those compile definitions (for the
    # settings a header keeps behind #ifndef, e.g. SYMMEM_BARRIER_BACKOFF_NS=16000).
    if [ "$cmd" = define ]; then
      name=${1:?usage: tools/ab.sh define NAME REF MACRO=VALUE...}; ref=${2:?usage: tools/ab.sh define NAME REF MACRO=VALUE...}; shift 2
    else
      ref=${1:?usage: tools/ab.sh prepare REF}; name=$(echo "$ref" | tr '/' '_'); shift
    fi
    dir=.deps/ab/$name
    rm -rf "$dir" && mkdir -p "$dir" && git archive "$ref" | tar -x -C "$dir" || exit 1
    # (bench/results and docs stay behind: the device tool carries at most 64 MiB, session 70)
    rm -rf "$dir/bench/results" "$dir/docs"
    # (right after project(): a directory's definitions reach only the targets made after them)
    for d in "$@"; do sed -i "/^project(/a add_compile_definitions($d)" "$dir/CMakeLists.txt"; done
    echo "exported $ref into $dir${*:+ with $*}"
    ;;
  run)
    OUT=${OUT:-$PWD/gpu-out}
    mkdir -p "$OUT"
    if [ -x /usr/bin/g++ ]; then export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++; fi
    gtest=""
    [ -d .deps/googletest ] && gtest="-DSYMMEM_GTEST_SOURCE=$PWD/.deps/googletest"
    trees=(".")
    for d in .deps/ab/*/; do [ -d "$d" ] && trees+=("${d%/}"); done
    for t in "${trees[@]}"; do
      name=$( [ "$t" = . ] && echo work || basename "$t")
      # The working tree reuses build/ where gpu_run.sh configured it in this call (one build less).
      if [ "$t" = . ] && [ -f build/CMakeCache.txt ]; then bdir=build; else bdir=$t/build-ab; fi
      ( { [ "$bdir" = build ] || cmake -S "$t" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_BUILD_PYTHON=OFF $gtest; } &&
        cmake --build "$bdir" -j "$(nproc)" --target symmem-bench) > "$OUT/build-$name.log" 2>&1 ||
        { echo "build of $name failed"; tail -20 "$OUT/build-$name.log"; exit 1; }
    done
    # Labels inside the JSON: the tree (its ref, or COMMIT for the working tree; CMake's own guess
    # reads the enclosing checkout's HEAD) and the kind the GPUs present say.
    kind=$(gpu_kind)
    suites=("$@")
    [ ${#suites[@]} -gt 0 ] || suites=(all_reduce)
    rc=0
    for s in "${suites[@]}"; do
      for t in "${trees[@]}"; do
        name=$( [ "$t" = . ] && echo work || basename "$t")
        label=$( [ "$t" = . ] && echo "${COMMIT:-work}" || echo "$name")
        bin=$t/build-ab/bench/symmem-bench
        [ "$t" = . ] && [ -x build/bench/symmem-bench ] && [ -f build/CMakeCache.txt ] && bin=build/bench/symmem-bench
        timeout 240 "$bin" "$s" ${SYMMEM_AB_ARGS:-} --commit "$label" ${kind:+--kind "$kind"} \
          --json "$OUT/$s-$name.json" > "$OUT/$s-$name.log" 2>&1 ||
          { echo "$s with $name failed (see $s-$name.log)"; rc=1; }
        echo "== $s, $name"
        grep -E "^ " "$OUT/$s-$name.log" | head -24 || true
      done
    done
    # One archive (the device tool returns few files: session 9 lost an A/B's JSON to the count).
    pats=("build-*.log")
    for s in "${suites[@]}"; do pats+=("$s-*.json" "$s-*.log" "$s-*.svg"); done
    archive "$OUT" "ab-$(date +%H%M%S)" "${pats[@]}"
    exit $rc
    ;;
  *)
    echo "usage: tools/ab.sh prepare REF | run [SUITE...]" >&2
    exit 2
    ;;
esac
