#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for a while each, then prints how many inputs each one
# executed. Usage:
#
#   scripts/fuzz.sh <wire_decode|store|server_respond|all> [minutes per target, default 1]
#
# e.g. `scripts/fuzz.sh all 10`, `scripts/fuzz.sh store 0.5`. Per target this is
#   cargo +nightly-2026-05-19 fuzz run -s none -a [--no-trace-compares --target-dir …]
#     [--features server] <target> fuzz/work/<target>/corpus fuzz/corpus/<target> --
#     -max_total_time=<s> -print_final_stats=1 -reload=0 …
# The committed seeds (fuzz/corpus/<target>/) are read, never written: what a run discovers goes
# to fuzz/work/<target>/corpus/ (gitignored; kept between runs). A crash, timeout or OOM is
# written by libFuzzer to fuzz/artifacts/<target>/ and copied to fuzz/regressions/<target>/, which
# tests/fuzz_corpus.rs (server_respond: server/tests/fuzz_corpus.rs) replays as an ordinary test
# (`cargo fuzz tmin <target> <file>` minimizes it; `cargo fuzz run <target> <file>` reproduces it).
#
# Environment:
#   FUZZ_TOOLCHAIN   the nightly to build with (default nightly-2026-05-19, needs rust-src)
#   FUZZ_SANITIZER   none (default: the native crate has no unsafe code, only the wasm32 allocator; 2-3x faster) or address
#   FUZZ_KEEP_GOING  1: keep fuzzing after a crash (libFuzzer fork mode with -ignore_crashes)
#   FUZZ_ARGS        extra libFuzzer flags (e.g. "-max_len=8192 -seed=1")
#   FUZZ_MAX_MESSAGE_BYTES  the targets' error-message length limit (default 600)
#   FUZZ_TRACE_COMPARES  1/0: build with libFuzzer's integer-compare tracing (default 1, but 0
#                    for store: half its time went to tracing hash loops; its inputs are picks
#                    by `byte % n` and JSON keys, which memcmp interception still traces). A
#                    build without it goes to fuzz/target/no-trace-compares/.
#   FUZZ_KNOWN_BUGS  1: the store target steps around the store bugs `known_bugs` in
#                    fuzz/targets/store.rs lists (to fuzz past one until it is fixed)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
case ":$PATH:" in *":$CARGO_BIN:"*) ;; *) export PATH="$CARGO_BIN:$PATH" ;; esac

TOOLCHAIN="${FUZZ_TOOLCHAIN:-nightly-2026-05-19}"
SANITIZER="${FUZZ_SANITIZER:-none}"
ALL_TARGETS=(wire_decode store server_respond)

usage() {
  echo "usage: scripts/fuzz.sh <wire_decode|store|server_respond|all> [minutes per target]" >&2
  exit 2
}

[ $# -ge 1 ] || usage
case "$1" in
  all) TARGETS=("${ALL_TARGETS[@]}") ;;
  wire_decode | store | server_respond) TARGETS=("$1") ;;
  *) usage ;;
esac
MINUTES="${2:-1}"
SECONDS_PER_TARGET="$(awk -v m="$MINUTES" 'BEGIN { s = int(m * 60 + 0.5); if (s < 1) s = 1; print s }')"

if ! cargo "+$TOOLCHAIN" fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz or the $TOOLCHAIN toolchain is missing: rustup toolchain install $TOOLCHAIN --component rust-src; cargo install cargo-fuzz" >&2
  exit 2
fi

features_of() {
  case "$1" in server_respond) echo "--features server" ;; *) echo "" ;; esac
}

trace_compares_of() {
  case "$1" in store) echo "${FUZZ_TRACE_COMPARES:-0}" ;; *) echo "${FUZZ_TRACE_COMPARES:-1}" ;; esac
}

dict_of() {
  case "$1" in wire_decode | store) echo "-dict=fuzz/dict/json.dict" ;; *) echo "" ;; esac
}

SUMMARY=()
FAILED=0
for target in "${TARGETS[@]}"; do
  work="fuzz/work/$target"
  artifacts="fuzz/artifacts/$target"
  mkdir -p "$work/corpus" "$artifacts" "fuzz/regressions/$target"
  log="$work/fuzz.log"
  opts=(-s "$SANITIZER" -a)
  if [ "$(trace_compares_of "$target")" = 0 ]; then
    # Own target dir: switching the flag would otherwise rebuild everything each time.
    opts+=(--no-trace-compares --target-dir "$ROOT/fuzz/target/no-trace-compares")
  fi
  # shellcheck disable=SC2046
  opts+=($(features_of "$target"))
  build=(cargo "+$TOOLCHAIN" fuzz build "${opts[@]}" "$target")
  printf '\n==> [%s] %s\n' "$target" "${build[*]}"
  "${build[@]}"

  marker="$work/.started"
  touch "$marker"
  flags=(-max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048)
  [ -n "$(dict_of "$target")" ] && flags+=("$(dict_of "$target")")
  if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
    flags+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  else
    # One process: nobody else adds to the corpus, so do not re-read it every second.
    flags+=(-reload=0)
  fi
  # shellcheck disable=SC2206
  flags+=(${FUZZ_ARGS:-})
  run=(cargo "+$TOOLCHAIN" fuzz run "${opts[@]}" "$target"
    "$work/corpus" "fuzz/corpus/$target" -- "${flags[@]}")
  printf '==> [%s] %s\n' "$target" "${run[*]}"
  set +e
  "${run[@]}" 2>&1 | tee "$log"
  status="${PIPESTATUS[0]}"
  set -e

  # Execs and exec/s: libFuzzer's final stats (exec/s averaged over the time it actually ran);
  # in fork mode (no final stats) the last status line's counter and time.
  execs="$(awk -F': *' '/^stat::number_of_executed_units:/ { n = $NF } END { print n }' "$log")"
  rate="$(awk -F': *' '/^stat::average_exec_per_sec:/ { r = $NF } END { print r }' "$log")"
  if [ -z "$execs" ]; then
    last="$(grep -aE '^#[0-9]+: cov:' "$log" | tail -1 || true)"
    execs="$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last")"
    ran="$(sed -nE 's/.* time: ([0-9]+)s.*/\1/p' <<<"$last")"
    [ -n "$ran" ] && [ "$ran" -gt 0 ] && rate="$(awk -v n="${execs:-0}" -v s="$ran" 'BEGIN { printf "%.0f", n / s }')"
  fi
  execs="${execs:-0}"
  [ -n "$rate" ] || rate="$(awk -v n="$execs" -v s="$SECONDS_PER_TARGET" 'BEGIN { printf "%.0f", n / s }')"

  found=0
  while IFS= read -r -d '' file; do
    cp "$file" "fuzz/regressions/$target/"
    echo "    new finding: fuzz/regressions/$target/$(basename "$file")"
    found=$((found + 1))
  done < <(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) -newer "$marker" -print0)
  rm -f "$marker"

  result=ok
  if [ "$status" -ne 0 ] || [ "$found" -gt 0 ]; then
    result=FOUND
    FAILED=$((FAILED + 1))
  fi
  SUMMARY+=("$target|$result|$execs|$rate|$found")
done

echo
echo "======================== fuzz summary (${SECONDS_PER_TARGET}s per target) ========================"
printf '%-16s %-7s %14s %10s  %s\n' target result executed exec/s "findings (fuzz/regressions/<target>/)"
for entry in "${SUMMARY[@]}"; do
  IFS='|' read -r target result execs rate found <<<"$entry"
  printf '%-16s %-7s %14s %10s  %s\n' "$target" "$result" "$execs" "$rate" "$found"
done
if [ "$FAILED" -gt 0 ]; then
  echo "findings were copied to fuzz/regressions/: 'cargo test --test fuzz_corpus' replays them ('cargo test -p task-projection-server --test fuzz_corpus' for server_respond)"
  exit 1
fi
