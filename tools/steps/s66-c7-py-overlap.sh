#!/usr/bin/env bash
# Session 66, call 7 (a plain device command, not through tools/call.sh): symmem's Python overlap
# ops beside PyTorch's fused ops, torch.matmul alone and matmul + NCCL, interleaved, at TP = 2 on
# today's code (symmem.bench --suite overlap; last run in session 35). Builds the extension only.
#   COMMIT=<sha> bash tools/steps/s66-c7-py-overlap.sh     (carry [".deps"], ~3 minutes)
export CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++ NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"; T0=$(date +%s)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYMMEM_BUILD_PYTHON=ON > "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem_python symmem_python_files >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "== built at $(( $(date +%s) - T0 )) s"; nvidia-smi -L
PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=${COMMIT:-x} timeout 200 torchrun --nproc-per-node=2 -m symmem.bench --kind nvidia-h200-x2 \
  --suite overlap --overlap-ms "${MS:-4096,8192,16384}" --out "$OUT/py-overlap.json" > "$OUT/py-overlap.log" 2>&1
echo "== rc $? at $(( $(date +%s) - T0 )) s"; grep -E "^#|^ +(8B|70B)|Error|error" "$OUT/py-overlap.log" | head -40
