# compute-sanitizer over symmem_gpu_tests, for the step files (sourced after tools/call.sh's helpers):
#   CS TOOL RANKS FILTER SECONDS [TOOL OPTIONS...]
# runs FILTER at RANKS ranks on one GPU, each rank's process under `compute-sanitizer --tool TOOL`
# (a report fails the run: exit code 9), then prints the sanitizer's lines counted over ranks
# (addresses masked), the summaries first. The wait bound is raised: kernels run 10-100x slower.
CSAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$CSAN" --version | tail -1
CS() {
  local tool=$1 n=$2 f=$3 s=$4; shift 4
  WRAP="$CSAN --tool $tool --error-exitcode 9 --print-limit 30 --show-backtrace device $*" FILTER="$f" TLIMIT=$s \
    T "$n" "$n" SYMMEM_TIMEOUT_MS=${CS_TIMEOUT_MS:-60000}
  local lines  # the sanitizer's lines, rank and addresses masked, counted
  lines=$(grep -a "=========" "$OUT/t.log" | sed -E 's/^\[rank [0-9]+\] //; s/0x[0-9a-f]+/0x_/g; s/thread \([0-9,]+\)/thread (_)/; s/block \([0-9,]+\)/block (_)/' |
    sort | uniq -c | sort -rn)
  grep -a "SUMMARY" <<< "$lines" | tee -a "$OUT/summary.txt"
  grep -av "SUMMARY" <<< "$lines" | head -40 | cut -c1-300
  echo "   slowest tests (rank 0):"
  grep -aE "^(\[rank 0\] )?\[       OK \]" "$OUT/t.log" | sed -E 's/.*OK \] //' | awk '{t=$NF; gsub(/[()]/, "", $(NF-1)); print $(NF-1), $1}' |
    sort -rn | head -8 | sed 's/^/     /'
}
