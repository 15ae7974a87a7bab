#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, in
# build/fuzz) and runs them, one after the other unless --jobs says
# otherwise (docs/fuzzing.md).
#
#   tests/fuzz/run.sh [SECONDS] [NAME...]    fuzz each target SECONDS (default 60)
#   tests/fuzz/run.sh --regression [NAME...] run each seed and each recorded
#                                            crash input once, no mutation
#   tests/fuzz/run.sh --runs N SECONDS [NAME...]
#                                            stop each target after N executions
#                                            or SECONDS, whichever comes first
#   --jobs N                                 run N targets at a time (default 1;
#                                            one core each)
#
# NAME is a target (request_target, url_policy, ...); default: every
# tests/fuzz/*_fuzz.cc. A fuzz run starts from a scratch copy of
# corpus/NAME/ (the repo's seeds never grow) plus crashes/NAME/, with
# NAME.dict and the flags of NAME.options when they exist. A crash, leak,
# timeout or out-of-memory fails the run: the script prints the reproducer's
# path and its bytes in hex, keeps going with the other targets, and exits 1
# at the end. Reproduce with: build/fuzz/bin/fuzz/NAME_fuzz <file>.
#
# Environment: SHORTENER_FUZZ_BUILD_DIR (default build/fuzz),
# SHORTENER_FUZZ_JOBS (build jobs, default nproc), SHORTENER_FUZZ_KEEP=1
# keeps the scratch directories (grown corpora, logs) of passing runs too.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

mode=fuzz
seconds=60
runs=""
parallel=1
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --regression) mode=regression ;;
    --runs) runs=$2; shift ;;
    --jobs) parallel=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *[!0-9]*) names+=("$1") ;;
    *) seconds=$1 ;;
  esac
  shift
done

source deploy/local/deps.sh
shortener_install_deps

build=${SHORTENER_FUZZ_BUILD_DIR:-build/fuzz}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# -O1 with line tables, as fuzzing builds usually are: quick to compile,
# fast enough to run, readable stacks; and no NDEBUG, so asserts check too.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Fuzz \
  -DCMAKE_C_FLAGS_FUZZ="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DSHORTENER_FUZZ=ON \
  -DSHORTENER_BUILD_TESTS=OFF -DSHORTENER_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "${SHORTENER_FUZZ_JOBS:-$(nproc)}" --target fuzzers

if [ ${#names[@]} -eq 0 ]; then
  for src in tests/fuzz/*_fuzz.cc; do
    n=$(basename "$src" _fuzz.cc)
    names+=("$n")
  done
fi

# UB already aborts (-fno-sanitize-recover); the stack says where.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# Prints the reproducer `file` and its first 1 KiB in hex.
show_input() {
  local file=$1
  echo "   reproducer: $file ($(stat -c %s "$file") bytes)"
  echo "   input (hex, first 1 KiB):"
  head -c 1024 "$file" | od -An -tx1 -v | sed 's/^/    /'
}

# The libFuzzer flags of target `name` beyond the corpus: its dictionary and
# NAME.options (one flag per line; '#' starts a comment).
target_flags() {
  local name=$1
  flags=(-timeout=10)
  if [ -f "tests/fuzz/$name.dict" ]; then flags+=("-dict=$root/tests/fuzz/$name.dict"); fi
  if [ -f "tests/fuzz/$name.options" ]; then
    local line
    while IFS= read -r line; do
      line=${line%%#*}
      line=${line//[[:space:]]/}
      if [ -n "$line" ]; then flags+=("$line"); fi
    done <"tests/fuzz/$name.options"
  fi
}

# Runs target `name` and leaves its report in $results/NAME.report, its
# summary line in $results/NAME.line, and $results/NAME.failed if it failed.
run_one() {
  local name=$1
  local report=$results/$name.report
  local bin=$root/$build/bin/fuzz/${name}_fuzz
  exec 3>"$report"
  if [ ! -x "$bin" ]; then
    echo "!! $name: $bin was not built (is it in tests/fuzz/CMakeLists.txt?)" >&3
    printf '%-24s not built  FAILED\n' "$name" >"$results/$name.line"
    touch "$results/$name.failed"
    return
  fi
  local flags
  target_flags "$name"
  local scratch log inputs=() status=0 started=$SECONDS
  scratch=$(mktemp -d "/tmp/shortener-fuzz-$name.XXXXXX")
  log=$scratch/$name.log
  mkdir -p "$scratch/artifacts"
  if [ "$mode" = regression ]; then
    local dir f
    for dir in corpus crashes; do
      if [ -d "tests/fuzz/$dir/$name" ]; then
        while IFS= read -r -d '' f; do inputs+=("$root/$f"); done \
          < <(find "tests/fuzz/$dir/$name" -type f ! -name 'README*' -print0 | sort -z)
      fi
    done
    if [ ${#inputs[@]} -eq 0 ]; then
      echo "!! $name: no seed corpus in tests/fuzz/corpus/$name" >&3
      printf '%-24s no seeds  FAILED\n' "$name" >"$results/$name.line"
      touch "$results/$name.failed"
      return
    fi
    # Given files rather than directories, libFuzzer runs each one once,
    # whole (no -max_len cut), and stops at the first that fails.
    "$bin" "${flags[@]}" "-artifact_prefix=$scratch/artifacts/" "${inputs[@]}" >"$log" 2>&1 \
      || status=$?
  else
    mkdir -p "$scratch/corpus"
    if [ -d "tests/fuzz/corpus/$name" ]; then cp -r "tests/fuzz/corpus/$name/." "$scratch/corpus/"; fi
    if [ -d "tests/fuzz/crashes/$name" ]; then inputs+=("$root/tests/fuzz/crashes/$name"); fi
    local limit=(-max_total_time="$seconds")
    if [ -n "$runs" ]; then limit+=(-runs="$runs"); fi
    # The outer timeout only guards against a fuzzer that stops checking its
    # own clock; libFuzzer's -timeout catches a slow input first.
    timeout -k 10 $((seconds + 120)) "$bin" "${flags[@]}" "${limit[@]}" -print_final_stats=1 \
      "-artifact_prefix=$scratch/artifacts/" "$scratch/corpus" "${inputs[@]}" >"$log" 2>&1 \
      || status=$?
  fi

  local elapsed=$((SECONDS - started)) execs cov line
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || true)
  if [ "$mode" = regression ]; then
    line=$(printf '%-24s %6s inputs' "$name" "${#inputs[@]}")
  else
    line=$(printf '%-24s %12s execs %6s s  corpus %6s  %s' "$name" "${execs:-?}" "$elapsed" \
      "$(find "$scratch/corpus" -type f | wc -l)" "${cov:-}")
  fi
  if [ "$status" -ne 0 ]; then
    echo "!! $name FAILED (exit $status); log: $log" >&3
    grep -E 'ERROR: |SUMMARY: |runtime error|fuzz invariant failed|ALARM|deadly signal' "$log" \
      | head -5 | sed 's/^/   /' >&3 || true
    local found=0 artifact last
    for artifact in "$scratch"/artifacts/*; do
      if [ -f "$artifact" ]; then show_input "$artifact" >&3; found=1; fi
    done
    if [ "$found" -eq 0 ]; then
      last=$(sed -n 's/^Running: //p' "$log" | tail -1)
      if [ -n "$last" ] && [ -f "$last" ]; then show_input "$last" >&3; fi
    fi
    echo "$line  FAILED" >"$results/$name.line"
    touch "$results/$name.failed"
  else
    echo "$line  ok" >"$results/$name.line"
    if [ -z "${SHORTENER_FUZZ_KEEP:-}" ]; then rm -rf "$scratch"; else echo "   kept $scratch" >&3; fi
  fi
}

results=$(mktemp -d /tmp/shortener-fuzz-results.XXXXXX)
trap 'rm -rf "$results"' EXIT
if [ "$mode" = regression ]; then
  echo "== fuzz regression: every seed and recorded crash input once"
else
  echo "== fuzzing each target ${seconds}s${runs:+ or $runs executions}, $parallel at a time"
fi
running=0
for name in "${names[@]}"; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  echo "   $name"
  run_one "$name" &
  running=$((running + 1))
done
wait

failed=()
for name in "${names[@]}"; do
  cat "$results/$name.report" >&2
  if [ ! -f "$results/$name.line" ]; then
    # run_one itself failed before it could report.
    printf '%-24s no result  FAILED\n' "$name" >"$results/$name.line"
    touch "$results/$name.failed"
  fi
  if [ -f "$results/$name.failed" ]; then failed+=("$name"); fi
done
echo "== fuzz summary ($mode)"
for name in "${names[@]}"; do cat "$results/$name.line"; done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz targets failed: ${failed[*]}" >&2
  exit 1
fi
