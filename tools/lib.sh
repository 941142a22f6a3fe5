# Sourced by the device scripts (gpu_run.sh, ab.sh, peers.sh, next_call.sh, call.sh): what they share.
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

# archive DIR NAME PATTERN...: the files under DIR that match the patterns go into one archive,
# DIR/NAME.tgz (or NAME-<pid>.tgz where that exists already: a second run in one call keeps the
# first one's), and are removed; nothing happens where none match. (The device tool returns few
# files: sessions 9 lost JSON and logs to the count and to overwritten archives.)
archive() {
  local dir=$1 name=$2
  shift 2
  (
    cd "$dir" || exit 0
    shopt -s nullglob
    local files=() p
    for p in "$@"; do files+=($p); done
    [ ${#files[@]} -gt 0 ] || exit 0
    local arch=$name.tgz
    [ -e "$arch" ] && arch=$name-$$.tgz
    tar czf "$arch" "${files[@]}" && rm -f "${files[@]}"
  )
}
