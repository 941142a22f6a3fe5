#!/usr/bin/env bash
# The peers beside symmem, built from their public source (or wheels) on the GPU machine: the MoE
# peers (issue 10) by `prepare` and `run`, NVSHMEM's one-sided primitives by `nvshmem` (below).
#
# Here (with the library's mirrors):  tools/peers.sh prepare
#     exports DeepEP v1.2.1 into .deps/deepep and pplx-kernels 12cecfd into .deps/pplx (ignored;
#     carry [".deps"] in the device call).
# On the device:                      tools/peers.sh run [NPROC]
#     builds DeepEP (intranode, and low-latency with the NVSHMEM that PyTorch's wheels bring),
#     then its own low-latency test at the decode shape (its intranode test with
#     PEERS_INTRANODE_TEST=1), bench/peers/deepep_moe.py (prefill, intranode) and, where symmem's
#     Python build is there, `python -m symmem.bench --suite moe` with DeepEP's low-latency kernels
#     beside symmem in one run; with PEERS_PPLX=1 also pplx-kernels (bench/peers/pplx_moe.py);
#     NPROC GPUs (default: all); logs and JSON in one archive, $OUT/peers.tgz.
#
# Measured in session 7 (one H100 machine, with /opt/gcc): the build takes ~60 s on 16 cores once
# CUDA's CCCL headers are on the C++ include path (NVSHMEM's nvshmem_tensor.h includes
# <cuda/std/tuple>; without them: "fatal error: cuda/std/tuple: No such file"). The script uses the
# system g++, as our own Python extension must there (/opt/gcc links libstdc++ statically).
# pplx-kernels 12cecfd (its head integrates NVSHMEM4Py): CMake build against the same NVSHMEM, then
# bench/peers/pplx_moe.py on the decode shapes; written in session 8, NOT YET RUN.
# Multicast stays off in every child (lib.sh).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cmd=${1:-}
shift || true
case "$cmd" in
  prepare)
    mirror=${DEEPEP_MIRROR:-/work/.mirror/deepseek-ai+DeepEP/repo}
    rm -rf .deps/deepep && mkdir -p .deps/deepep &&
      git --git-dir="$mirror" archive v1.2.1 | tar -x -C .deps/deepep && echo "exported DeepEP v1.2.1 into .deps/deepep"
    # vLLM's custom all-reduce (bench/peers/vllm_custom_ar.py, the --vllm-peer column of `python -m
    # symmem.bench`) needs .deps/vllm/csrc/custom_all_reduce.cuh. vllm-project/vllm is too large for
    # the library's fetch (1.1 GB); session 73 wrote that one file from the library's stored copy
    # (read_file repo=vllm-project/vllm path=csrc/custom_all_reduce.cuh
    # commit=c9eabec7d862b69d943f516580c883c20bea5a0e, 17,097 characters; one
    # comment line lost a trailing space on the way). It is not part of symmem.
    [ -f .deps/vllm/csrc/custom_all_reduce.cuh ] ||
      echo "no .deps/vllm/csrc/custom_all_reduce.cuh: write it from the stored vLLM file named in tools/peers.sh to time vLLM's custom all-reduce"
    # pplx-kernels at 12cecfd: its last commit before NVSHMEM4Py (nvshmem.core, cuda.core: Python
    # packages the GPU machines lack); its own C++ NVSHMEM bindings need only the library.
    pmirror=${PPLX_MIRROR:-/work/.mirror/perplexityai+pplx-kernels/repo}
    if [ -d "$pmirror" ]; then
      rm -rf .deps/pplx && mkdir -p .deps/pplx &&
        git --git-dir="$pmirror" archive 12cecfd | tar -x -C .deps/pplx && echo "exported pplx-kernels 12cecfd into .deps/pplx"
    fi
    ;;
  run)
    OUT=${OUT:-$PWD/gpu-out}
    mkdir -p "$OUT"
    n=${1:-$(nvidia-smi -L | wc -l)}
    export SYMMEM_COMMIT=${COMMIT:-${SYMMEM_COMMIT:-}} SYMMEM_KIND=$(gpu_kind) DEEPEP_VERSION=v1.2.1  # labels in the JSON (no git on the machine)
    cuda=$(dirname "$(dirname "$(command -v nvcc)")")
    [ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++ CC=/usr/bin/gcc
    export CPLUS_INCLUDE_PATH="$cuda/include/cccl:$cuda/include" C_INCLUDE_PATH="$cuda/include/cccl" TORCH_CUDA_ARCH_LIST=9.0
    export MAX_JOBS=$(nproc)
    # PEERS_DEEPEP=0 skips DeepEP (e.g. a call for pplx-kernels alone).
    if [ "${PEERS_DEEPEP:-1}" = 1 ]; then
    [ -d .deps/deepep ] || { echo "no .deps/deepep: run tools/peers.sh prepare here first" >&2; exit 2; }
    (cd .deps/deepep && timeout 300 python setup.py build_ext --inplace) > "$OUT/peer-deepep-build.log" 2>&1 ||
      { echo "DeepEP build failed"; tail -20 "$OUT/peer-deepep-build.log"; exit 1; }
    echo "== DeepEP built"
    # The issue's shapes: decode (128 tokens, H 7168, top-8 of 256, low latency) and prefill
    # (4096 tokens, intranode); their tests check correctness and print their timings.
    (cd .deps/deepep && PYTHONPATH=$PWD timeout 120 python tests/test_low_latency.py --num-processes "$n" --num-tokens 128 \
      --hidden 7168 --num-topk 8 --num-experts 256) > "$OUT/peer-deepep-ll.log" 2>&1 || echo "DeepEP low-latency test failed (see peer-deepep-ll.log)"
    grep -E "rank 0\].*(bandwidth|send/recv|avg_t)" "$OUT/peer-deepep-ll.log" | head -8
    # (DeepEP's intranode test also tunes its configs at several sizes: minutes; PEERS_INTRANODE_TEST=1 runs it.)
    if [ "${PEERS_INTRANODE_TEST:-0}" = 1 ]; then
      (cd .deps/deepep && PYTHONPATH=$PWD timeout 240 python tests/test_intranode.py --num-processes "$n" --num-tokens 4096 \
        --hidden 7168 --num-topk 8 --num-experts 256) > "$OUT/peer-deepep-intranode.log" 2>&1 ||
        echo "DeepEP intranode test failed (see peer-deepep-intranode.log)"
      grep -E "Best|best|GB/s" "$OUT/peer-deepep-intranode.log" | head -8
    fi
    # Prefill: DeepEP's intranode kernels (eager, events, max over ranks).
    PYTHONPATH=$PWD/.deps/deepep timeout 300 torchrun --nproc-per-node="$n" bench/peers/deepep_moe.py --out "$OUT/deepep_moe.json" \
      > "$OUT/peer-deepep-bench.log" 2>&1 || echo "deepep_moe.py failed (see peer-deepep-bench.log)"
    grep -E "^\{" "$OUT/peer-deepep-bench.log" | head -8
    # Decode shapes: symmem and DeepEP's low-latency kernels in one run, the same graph replays
    # (python -m symmem.bench --suite moe; needs symmem's Python build in build/python: gpu_run.sh first).
    if [ -d build/python/symmem ]; then
      PYTHONPATH=$PWD/build/python:$PWD/.deps/deepep timeout 300 torchrun --nproc-per-node="$n" -m symmem.bench --suite moe --kind "$(gpu_kind)" \
        --out "$OUT/python_moe_deepep.json" > "$OUT/peer-python-moe.log" 2>&1 || echo "symmem.bench --suite moe failed (see peer-python-moe.log)"
      grep -E "^# moe" "$OUT/peer-python-moe.log" | head -8
    fi
    fi  # PEERS_DEEPEP
    # pplx-kernels (intranode) on the decode shapes, with PEERS_PPLX=1 (its build may take minutes:
    # give it a call of its own): CMake against PyTorch's NVSHMEM wheel, which has no CMake config
    # of its own, so a small one is written here (session 8; NOT YET RUN).
    if [ -d .deps/pplx ] && [ "${PEERS_PPLX:-0}" = 1 ]; then
      nv=$(python -c "import importlib.util as u; print(u.find_spec('nvidia.nvshmem').submodule_search_locations[0])" 2>/dev/null)
      host=$(ls "$nv"/lib/libnvshmem_host.so* 2>/dev/null | head -1)
      shim=$PWD/.deps/pplx-shim && mkdir -p "$shim"
      cat > "$shim/NVSHMEMConfig.cmake" <<CMAKE
set(NVSHMEM_INCLUDE_DIR "$nv/include")
add_library(nvshmem::nvshmem_host SHARED IMPORTED)
set_target_properties(nvshmem::nvshmem_host PROPERTIES IMPORTED_LOCATION "$host" INTERFACE_INCLUDE_DIRECTORIES "$nv/include")
add_library(nvshmem::nvshmem_device STATIC IMPORTED)
set_target_properties(nvshmem::nvshmem_device PROPERTIES IMPORTED_LOCATION "$nv/lib/libnvshmem_device.a" INTERFACE_INCLUDE_DIRECTORIES "$nv/include")
add_library(nvshmem::nvshmem INTERFACE IMPORTED)
set_target_properties(nvshmem::nvshmem PROPERTIES INTERFACE_LINK_LIBRARIES "nvshmem::nvshmem_host;nvshmem::nvshmem_device")
add_library(nvshmem::nvshmem_bootstrap_uid INTERFACE IMPORTED)
set(NVSHMEM_FOUND TRUE)
CMAKE
      tp=$(python -c "import torch.utils; print(torch.utils.cmake_prefix_path)")
      (cd .deps/pplx && timeout 300 cmake -S csrc -B build-cmake -G Ninja -DCMAKE_PREFIX_PATH="$tp" -DNVSHMEM_DIR="$shim" \
        -DCMAKE_CUDA_ARCHITECTURES=90a -DTORCH_CUDA_ARCH_LIST=9.0a -DCMAKE_BUILD_RPATH="$nv/lib" \
        ${CXX:+-DCMAKE_CUDA_HOST_COMPILER=$CXX} && timeout 400 ninja -C build-cmake) \
        > "$OUT/peer-pplx-build.log" 2>&1 || { echo "pplx-kernels build failed"; tail -20 "$OUT/peer-pplx-build.log"; }
      if [ -f .deps/pplx/src/pplx_kernels/libpplx_kernels.so ]; then
        echo "== pplx-kernels built"
        # NVSHMEM's bootstrap plugins (nvshmem_bootstrap_uid.so) are loaded by name: its lib folder on
        # the loader's path; one node, so no remote transport (the IB/IBGDA init fails here).
        LD_LIBRARY_PATH="$nv/lib:${LD_LIBRARY_PATH:-}" NVSHMEM_REMOTE_TRANSPORT=none \
          PYTHONPATH=$PWD/.deps/pplx/src timeout 240 torchrun --nproc-per-node="$n" bench/peers/pplx_moe.py --out "$OUT/pplx_moe.json" \
          > "$OUT/peer-pplx-bench.log" 2>&1 || { echo "pplx_moe.py failed (see peer-pplx-bench.log)"; grep -v "^\s*$" "$OUT/peer-pplx-bench.log" | tail -25; }
        grep -E "^\{" "$OUT/peer-pplx-bench.log" | head -8
      fi
    fi
    # The device tool returns few files (eight in session 35, which lost a call's results.tgz to
    # the count): the logs and the JSON travel as one archive. (A second run in one call keeps the
    # first one's archive: session 9 lost pplx's log that way.)
    archive "$OUT" peers "peer-*.log" "deepep_moe*.json" "pplx_moe*.json" "python_moe_deepep*.json"
    ;;
  nvshmem)
    # NVSHMEM's one-sided primitives beside symmem's, ranks 0 and 1 of this machine, one call:
    # bench/peers/nvshmem_p2p.cu built against the NVSHMEM that PyTorch's wheels bring (into
    # build/nvshmem-p2p; needs symmem's build/ for symmem-run and symmem-bench), then
    # `symmem-bench p2p ARGS` and nvshmem-p2p ARGS (default -e 2M) one after the other, twice
    # (symmem first, then NVSHMEM first; NVSHMEM_PAIRS=1: once, symmem first), and bench/peers/compare_p2p.py on each pair: JSON in
    # $OUT/r/ (p2p-symmem-N, p2p-nvshmem-N, p2p-vs-nvshmem-N), the build log in $OUT/build-nvshmem.log.
    OUT=${OUT:-$PWD/gpu-out}
    mkdir -p "$OUT/r"
    nv=$(python -c "import importlib.util as u; print(u.find_spec('nvidia.nvshmem').submodule_search_locations[0])" 2>/dev/null)
    host=$(ls "$nv"/lib/libnvshmem_host.so* 2>/dev/null | head -1)
    [ -n "$nv" ] && [ -n "$host" ] || { echo "no NVSHMEM here (python: import nvidia.nvshmem)" >&2; exit 3; }
    [ -x build/symmem-run ] && [ -x build/bench/symmem-bench ] || { echo "build symmem-run and symmem-bench into build/ first" >&2; exit 2; }
    cuda=$(dirname "$(dirname "$(command -v nvcc)")")
    timeout 300 nvcc -std=c++17 -O3 -arch=sm_90 -rdc=true ${CXX:+-ccbin "$CXX"} -I"$nv/include" -I"$cuda/include/cccl" \
      -o build/nvshmem-p2p bench/peers/nvshmem_p2p.cu -L"$nv/lib" -lnvshmem_device -Xlinker "-l:$(basename "$host")" \
      -Xlinker -rpath -Xlinker "$nv/lib" -L"$cuda/lib64/stubs" -lcuda > "$OUT/build-nvshmem.log" 2>&1 ||
      { echo "nvshmem-p2p build failed"; tail -20 "$OUT/build-nvshmem.log"; exit 1; }
    echo "== nvshmem-p2p built ($(basename "$host"))"
    [ $# -gt 0 ] || set -- -e 2M
    kind=$(gpu_kind)
    sym() {
      timeout 200 build/bench/symmem-bench p2p "$@" --kind "$kind" --commit "${COMMIT:-x}" --json "$OUT/r/p2p-symmem-$i.json" \
        > "$OUT/p2p-symmem.log" 2>&1 || { echo "symmem-bench p2p failed"; tail -5 "$OUT/p2p-symmem.log"; }
    }
    nvs() {
      # (the bootstrap plugin is loaded by name from NVSHMEM's lib folder; one node: no remote transport)
      LD_LIBRARY_PATH="$nv/lib:${LD_LIBRARY_PATH:-}" NVSHMEM_REMOTE_TRANSPORT=none NVSHMEM_IB_ENABLE_IBGDA=0 SYMMEM_KIND="$kind" \
        timeout 200 build/symmem-run -n 2 build/nvshmem-p2p --uid-file "/tmp/symmem-nvshmem-uid-$$-$i" "$@" \
        --json "$OUT/r/p2p-nvshmem-$i.json" > "$OUT/p2p-nvshmem.log" 2>&1 ||
        { echo "nvshmem-p2p failed"; grep -v "^\s*$" "$OUT/p2p-nvshmem.log" | tail -15; }
    }
    for i in $(seq 1 "${NVSHMEM_PAIRS:-2}"); do
      if [ "$i" = 1 ]; then sym "$@"; nvs "$@"; else nvs "$@"; sym "$@"; fi
      grep -E "^#" "$OUT/p2p-nvshmem.log" | head -3
      python3 bench/peers/compare_p2p.py "$OUT/r/p2p-symmem-$i.json" "$OUT/r/p2p-nvshmem-$i.json" --out "$OUT/r/p2p-vs-nvshmem-$i.json"
    done
    ;;
  *)
    echo "usage: tools/peers.sh prepare | run [NPROC] | nvshmem [symmem-bench p2p ARGS]" >&2
    exit 2
    ;;
esac
