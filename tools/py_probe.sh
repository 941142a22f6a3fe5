#!/usr/bin/env bash
# Quick probes of the Python extension on a GPU machine (what crashes, and where).
export PYTHONPATH=$PWD/build/python NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
probe() { echo "== $1"; shift; timeout 60 "$@" 2>&1 | tail -25; echo "rc=$?"; }
probe "no GPU, no torch" env CUDA_VISIBLE_DEVICES= python3 -c "import symmem._C as C
try: C.Context.from_env()
except Exception as e: print(type(e).__name__, e)"
probe "no GPU, torch first" env CUDA_VISIBLE_DEVICES= python3 -c "import torch, symmem._C as C
try: C.Context.from_env()
except Exception as e: print(type(e).__name__, e)"
probe "1 rank, no torch" python3 -c "import symmem._C as C; ctx=C.Context.from_env(); c=C.Communicator(ctx); print('ok', c.size)"
probe "1 rank, torch first" python3 -c "import torch, symmem._C as C; ctx=C.Context.from_env(); c=C.Communicator(ctx); print('ok', c.size)"
probe "gdb: no GPU, torch first" env CUDA_VISIBLE_DEVICES= cuda-gdb -q -batch -ex run -ex bt --args python3 -c "import torch, symmem._C as C
try: C.Context.from_env()
except Exception as e: print(type(e).__name__, e)"
probe "gdb: 1 rank torch first" cuda-gdb -q -batch -ex run -ex bt --args python3 -c "import torch, symmem._C as C; ctx=C.Context.from_env(); c=C.Communicator(ctx); print('ok', c.size)"
ldd build/python/symmem/_C*.so | grep -E "symmem|cudart|nccl|stdc"
python3 -c "import torch, os; print(torch.__file__)"; cat /proc/self/maps > /dev/null
