# Steps for tools/call.sh on a 2-GPU machine (session 67's last call, the final library code: 8B
# M 8192 mm+rs on hopper_gemm's fused form). (1) symmem-bench overlap at TP = 2, every shape,
# replayed back to back (the figures); (2) 8B after a near-idle millisecond
# (SYMMEM_BENCH_IDLE_US=1000); (3) the Python harness at 8B M 8192 and 16384 (its duty cycle:
# ~0.5 ms spin and a host barrier before each replay); (4) the 1- and 2-GPU suite (as
# s66-c5-x2.sh), stopped after 250 s; (5) the README's main job where time is left. ~9 minutes.
#   COMMIT=<sha> bash tools/call.sh tools/steps/s67-c4-x2.sh
export SMI_LOG=1
O final-tp2 | grep -E "^==|ag\\+mm|mm\\+rs|GPU"
O final-idle SYMMEM_BENCH_IDLE_US=1000 SYMMEM_OVERLAP_TWINS=2 SYMMEM_OVERLAP_MODELS=8B SYMMEM_OVERLAP_M=8192,16384 | grep -E "^==|ag\\+mm|mm\\+rs|GPU"
cmake -S . -B build -DSYMMEM_BUILD_PYTHON=ON >> "$OUT/build.log" 2>&1 &&
  cmake --build build -j "$(nproc)" --target symmem_python symmem_python_files >> "$OUT/build.log" 2>&1 || { echo "python build failed"; tail -20 "$OUT/build.log"; }
smi_start py-final
PYTHONPATH=$PWD/build/python SYMMEM_COMMIT=$C timeout 120 torchrun --nproc-per-node=2 -m symmem.bench --kind "$kind" \
  --suite overlap --overlap-models 8B --overlap-ms 8192,16384 --out "$OUT/r/py-final.json" > "$OUT/py.log" 2>&1
echo "== py-final rc $? at $(el) s"; grep -E "^ +8B|Error|model" "$OUT/py.log"
smi_stop py-final
SUITE12
MAINJOB 470
true
