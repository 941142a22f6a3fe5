#!/usr/bin/env bash
# Session 73, call 1 (2 x H200; a whole device command, not a call.sh step file): issue 10 at 2
# GPUs on today's code beside every peer in one call. Session 35 last did this, before the small
# rounds' LL lines (sessions 41-45). In order: symmem-bench moe (every shape, uniform and skewed,
# NCCL's padded all-to-all in the same run), PyTorch's baseline (the anchor: a counts exchange,
# then all_to_all_single over NCCL), then tools/peers.sh with pplx-kernels: DeepEP's low-latency
# test at the decode shape, its intranode kernels at prefill, `python -m symmem.bench --suite moe`
# with DeepEP's low-latency kernels in the same graphs, pplx-kernels (intranode, decode shapes).
# Everything comes back in one archive, s73c1.tgz. ~8 minutes with the start.
#   COMMIT=<sha> bash tools/steps/s73-c1-x2.sh        (carry [".deps"], after tools/peers.sh prepare)
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT/r"; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
kind=$(gpu_kind); C=${COMMIT:-x}; n=$(nvidia-smi -L | wc -l)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_BUILD_TESTS=OFF -DSYMMEM_BUILD_EXAMPLES=OFF \
  -DSYMMEM_BUILD_PYTHON=ON > "$OUT/r/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem-bench symmem_python >> "$OUT/r/build.log" 2>&1 || { tail -30 "$OUT/r/build.log"; exit 1; }
echo "== built at $(el) s on $kind"; nvidia-smi -L
timeout 150 build/bench/symmem-bench moe --kind "$kind" --commit "$C" --json "$OUT/r/moe.json" > "$OUT/r/moe.log" 2>&1
echo "== symmem-bench moe rc $? at $(el) s"; grep -E "^ +[a-z]|^#" "$OUT/r/moe.log" | grep -v " shape "
timeout 150 torchrun --nproc-per-node="$n" .deps/anchors/torch_moe_a2a.py --out "$OUT/r/torch_moe_a2a.json" > "$OUT/r/torch_moe_a2a.log" 2>&1
echo "== torch_moe_a2a rc $? at $(el) s"; grep -vE "^\s*$|Warning|warn" "$OUT/r/torch_moe_a2a.log" | tail -12
COMMIT=$C PEERS_PPLX=1 OUT="$OUT/p" timeout $(( 560 - $(el) )) bash tools/peers.sh run "$n"
echo "== peers rc $? at $(el) s"
(cd "$OUT" && tar czf s73c1.tgz r p && rm -rf r p)
