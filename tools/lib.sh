# Sourced by the device scripts (gpu_run.sh, ab.sh, peers.sh): what they share.
# Multicast stays off in every child (symmem never uses NVLink multicast).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# The kind the GPUs present make, nvidia-<card>-x<count> (e.g. nvidia-h200-x4), or "" without
# nvidia-smi: a call that asks for one kind may run on another, so results are labelled from this.
gpu_kind() {
  local card n
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE "H100|H200|A100|B200|GB200|L40S" |
    head -1 | tr 'A-Z' 'a-z')
  n=$(nvidia-smi -L 2>/dev/null | wc -l)
  [ -n "$card" ] && [ "$n" -gt 0 ] && echo "nvidia-$card-x$n"
  return 0
}
