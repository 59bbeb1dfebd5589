#!/usr/bin/env bash
# Runs the fuzz targets on nightly with cargo-fuzz (`cargo install cargo-fuzz`).
#
#   maguyva-cli/fuzz/run.sh smoke          # every target for ${FUZZ_SECONDS:-20} s (CI)
#   maguyva-cli/fuzz/run.sh long [RUNS]    # every target for RUNS executions (default 10,000,000)
#   maguyva-cli/fuzz/run.sh TARGET [ARGS]  # one target, with libFuzzer's options
#
# The committed seeds in corpus/TARGET are only read; what the fuzzer learns
# goes to a working corpus under ${FUZZ_WORK:-/tmp/maguyva-fuzz}, and a crash
# to artifacts/TARGET/. Targets build with AddressSanitizer unless
# FUZZ_SANITIZER names another (`none`: about three times the inputs per
# second, for long runs). The smoke run builds without optimizations and
# with debug assertions (overflow checks): on 2 cores that build took 4.4
# minutes where the optimized one took about 10 in CI, and ten seconds of
# inputs per target do not need the speed; the others optimize.
set -euo pipefail
cd "$(dirname "$0")"
work=${FUZZ_WORK:-/tmp/maguyva-fuzz}
mode=-O
[[ ${1:-smoke} == smoke ]] && mode=--dev
targets=(sections framed query regex_plan model2vec mcp)
one() {
  local target=$1; shift
  mkdir -p "$work/$target"
  # The MCP target keeps one server across inputs: its buffers and tasks
  # outlive each input by design, which leak checking would report.
  local leaks=()
  [[ $target == mcp ]] && leaks=(-detect_leaks=0)
  cargo +nightly fuzz run "$mode" -s "${FUZZ_SANITIZER:-address}" "$target" "$work/$target" "corpus/$target" -- "${leaks[@]}" "$@"
}
# Every target at once: their links run side by side, where building each
# before its run would link them one by one.
all() { cargo +nightly fuzz build "$mode" -s "${FUZZ_SANITIZER:-address}"; }
case "${1:-smoke}" in
  smoke) all; for t in "${targets[@]}"; do one "$t" -max_total_time="${FUZZ_SECONDS:-20}"; done ;;
  long) all; for t in "${targets[@]}"; do one "$t" -runs="${2:-10000000}"; done ;;
  *) t=$1; shift; one "$t" "$@" ;;
esac
