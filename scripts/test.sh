#!/usr/bin/env bash
# Everything `npm test` (and .ci/run) runs, in order:
#   setup -> clippy -> native cargo test -> server suites (the workspace crate
#   `task-projection-server` with its feature `test-client`: SQLite, then the same suites against
#   a throwaway PostgreSQL) -> wasm tests (Node + headless Chromium)
#   -> package build -> tsc on the consumer file -> node:test against the built package (Node +
#   Chromium) -> the package's pages in WebKit and Firefox (`engines`) -> end-to-end (the demo
#   page and the real server, Chromium) -> packaging (the packed tarball in Next.js, Vite, Node).
# Every stage runs even when an earlier independent one failed (stages that need the package
# build are skipped when it failed), then a summary with durations and per-runner test counts.
# Logs: tests/artifacts/logs/<stage>.log.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
case ":$PATH:" in *":$CARGO_BIN:"*) ;; *) export PATH="$CARGO_BIN:$PATH" ;; esac
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

LOGS="$ROOT/tests/artifacts/logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"

STAGES=()      # "name|status|seconds|counts"
FAILED=0

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# cargo/wasm-bindgen-test-runner print "test result: ok. N passed; M failed; K ignored; ..."
cargo_counts() {
  awk '/^test result: /{ for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
       END { printf "%d passed, %d failed, %d ignored", p, f, s }' "$1"
}

# Splits the wasm stage's counts: a suite run by wasm-bindgen-test-runner in the browser prints
# "Running headless tests in Chrome" before its "test result" line; the others run in Node.
wasm_split() {
  awk '/^Running headless tests in /{ browser = 1 }
       /^test result: /{ for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) n = $i; if ($(i+1) ~ /^failed/) f = $i }
                         if (browser) { bp += n; bf += f } else { np += n; nf += f }; browser = 0 }
       END { printf "node %d passed, %d failed; chromium %d passed, %d failed", np, nf, bp, bf }' "$1"
}

# Runs one stage: stage <name> <command...>; output goes to the terminal and to its log.
stage() {
  local name="$1"; shift
  local log="$LOGS/$name.log" start status counts=""
  printf '\n==> [%s] %s\n' "$name" "$*"
  start="$(now)"
  if "$@" 2>&1 | tee "$log"; then status=ok; else status=FAILED; FAILED=$((FAILED + 1)); fi
  case "$name" in
    cargo-native|server-sqlite|server-postgres) counts="$(cargo_counts "$log")" ;;
    wasm-node-chromium) counts="$(cargo_counts "$log") ($(wasm_split "$log"))" ;;
  esac
  STAGES+=("$name|$status|$(elapsed "$start" "$(now)")|$counts")
  printf '<== [%s] %s in %ss\n' "$name" "$status" "$(elapsed "$start" "$(now)")"
  [ "$status" = ok ]
}

skip_stage() {
  printf '\n==> [%s] skipped: %s\n' "$1" "$2"
  STAGES+=("$1|skipped|0.0|")
}

T0="$(now)"

stage setup bash scripts/setup.sh || { echo "setup failed: nothing else can run" >&2; SETUP_FAILED=1; }

if [ -z "${SETUP_FAILED:-}" ]; then
  # Lints, natively: the whole workspace with every feature, then the root crate alone with
  # `server` (its server rules, no server crate), then the server crate without `test-client`
  # (the server without the test client builds, and the suites that need no client); and for the
  # wasm binding (wasm32-only code: both modules, then each alone, as the package builds them).
  # Both crates deny unwrap/expect/indexing/overflow lints outside tests.
  stage clippy bash -c 'set -e
    cargo clippy --workspace --all-targets --all-features -- -D warnings
    cargo clippy --all-targets --features server -- -D warnings
    cargo clippy -p task-projection-server --all-targets -- -D warnings
    cargo clippy --lib --target wasm32-unknown-unknown -- -D warnings
    for exports in store-exports rules-exports; do
      cargo clippy --lib --target wasm32-unknown-unknown --no-default-features --features "$exports" -- -D warnings
    done' || true

  # The root crate (not the server crate: the workspace's default member), with `server` so the
  # unit tests of the server rules (`rules::respond`, `rules::stall`) run too.
  stage cargo-native cargo test --no-fail-fast --features server || true

  # The server crate (server/tests/server_*.rs): every suite runs each case on SQLite (test
  # names without "postgres") and on PostgreSQL (names with "postgres"), the latter against a
  # throwaway cluster on loopback that scripts/postgres.sh starts and tears down on exit.
  # `test-client` (the loopback client) is on: server_http, server_security and server_instances
  # require it, and cargo would skip them without it. `--lib` runs the unit tests of server/src;
  # `fuzz_corpus` replays the server_respond fuzz corpus.
  stage server-sqlite cargo test --no-fail-fast -p task-projection-server --features test-client --lib --test 'server_*' --test fuzz_corpus -- --skip postgres || true
  stage server-postgres env TASK_PROJECTION_REQUIRE_PG=1 bash scripts/postgres.sh \
    cargo test --no-fail-fast -p task-projection-server --features test-client --test 'server_*' -- postgres || true

  # #[wasm_bindgen_test] suites: in Node, and in headless Chromium for the run_in_browser ones.
  # CHROMEDRIVER is explicit (the runner prefers a geckodriver when one exists); webdriver.json at
  # the repo root adds Chromium arguments.
  stage wasm-node-chromium env CHROMEDRIVER=/usr/bin/chromedriver cargo test --no-fail-fast --target wasm32-unknown-unknown || true

  if stage build node scripts/build.mjs; then
    stage tsc node_modules/.bin/tsc --noEmit -p tests/types || true
    COUNTS_JSON="$ROOT/tests/artifacts/node-test-counts.json"
    rm -f "$COUNTS_JSON"
    # Every JS test against the production build that apps ship (`task-projection` with no
    # `development` condition; the tests of the development features import
    # `task-projection/development`), then the files that prove both builds alike (every store
    # scenario, the convergence properties, the hostile catalogue, snapshots, what the store holds) again on the
    # development build (tests/js/build.mjs says which build a process resolved).
    stage node-test node --test \
      --test-reporter=spec --test-reporter-destination=stdout \
      --test-reporter=./scripts/node-test-counts.mjs --test-reporter-destination="$COUNTS_JSON" \
      tests/js/ || true
    DEVELOPMENT_COUNTS="$ROOT/tests/artifacts/node-test-development-counts.json"
    rm -f "$DEVELOPMENT_COUNTS"
    stage node-test-development node --conditions=development --test \
      --test-reporter=spec --test-reporter-destination=stdout \
      --test-reporter=./scripts/node-test-counts.mjs --test-reporter-destination="$DEVELOPMENT_COUNTS" \
      tests/js/store.node.test.mjs tests/js/store.convergence.test.mjs tests/js/hostile.test.mjs \
      tests/js/store.snapshot.test.mjs tests/js/store.api.test.mjs tests/js/store.sound.test.mjs tests/js/store.respond.test.mjs \
      tests/js/store.inbox.test.mjs tests/js/ported-inbox-slice.test.mjs || true
    # Other engines (tests/engines/, W3C WebDriver): the store and rules pages against every
    # browser entry of pkg/ in WebKit (WebKitGTK's MiniBrowser under Xvfb, WebKitWebDriver) and
    # Gecko (headless Firefox ESR, geckodriver), the demo at 390x844 in WebKit against the real
    # server, and the wasm-bindgen-test browser suite in Firefox (built by wasm-node-chromium above).
    # 30-50 s once built. Each WebDriver call has its own deadline; `timeout` ends a hung run (the tests
    # kill their Xvfb, drivers and browsers on SIGTERM).
    ENGINES_COUNTS="$ROOT/tests/artifacts/engines-counts.json"
    rm -f "$ENGINES_COUNTS"
    stage engines bash -c 'node www/build.mjs && cargo build -p task-projection-server --bin task-projection-server || exit
      timeout --kill-after=30 900 node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=./scripts/node-test-counts.mjs --test-reporter-destination="$0" tests/engines/ && exit
      rc=$?; if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "engines: stopped after 900 s (timeout)"; fi; exit "$rc"' "$ENGINES_COUNTS" || true
    # End-to-end: the demo page (www/dist) in headless Chromium against the real server binary
    # (package `task-projection-server`) on throwaway SQLite files, driven by the simulator
    # endpoints.
    E2E_COUNTS="$ROOT/tests/artifacts/e2e-counts.json"
    rm -f "$E2E_COUNTS"
    stage e2e bash -c 'node www/build.mjs && cargo build -p task-projection-server --bin task-projection-server && cargo build --bin task-projection-replay &&
      node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=./scripts/node-test-counts.mjs --test-reporter-destination="$0" tests/e2e/' "$E2E_COUNTS" || true
    # Packaging: the packed tarball in Next.js (webpack, Turbopack), Vite and Node consumers.
    PACKAGING_COUNTS="$ROOT/tests/artifacts/packaging-counts.json"
    rm -f "$PACKAGING_COUNTS"
    stage packaging bash scripts/test-packaging.sh --no-build \
      --test-reporter=spec --test-reporter-destination=stdout \
      --test-reporter=./scripts/node-test-counts.mjs --test-reporter-destination="$PACKAGING_COUNTS" || true
  else
    skip_stage tsc "package build failed"
    skip_stage node-test "package build failed"
    skip_stage node-test-development "package build failed"
    skip_stage engines "package build failed"
    skip_stage e2e "package build failed"
    skip_stage packaging "package build failed"
  fi
fi

# ---- summary ------------------------------------------------------------------------------------
TOTAL_SECONDS="$(elapsed "$T0" "$(now)")"
echo
echo "================================ summary ================================"
printf '%-20s %-8s %8s  %s\n' stage status seconds tests
for entry in "${STAGES[@]}"; do
  IFS='|' read -r name status secs counts <<<"$entry"
  printf '%-20s %-8s %8s  %s\n' "$name" "$status" "$secs" "$counts"
done
printf '%-20s %-8s %8s\n' total "" "$TOTAL_SECONDS"

# Per-runner counts of the node:test stages (written by scripts/node-test-counts.mjs).
COUNT_FILES=("${COUNTS_JSON:-/nonexistent}" "${DEVELOPMENT_COUNTS:-/nonexistent}" "${ENGINES_COUNTS:-/nonexistent}" "${E2E_COUNTS:-/nonexistent}" "${PACKAGING_COUNTS:-/nonexistent}")
if [ -s "${COUNTS_JSON:-/nonexistent}" ]; then
  echo
  echo "node:test runners:"
  node -e '
    const fs = require("fs");
    for (const file of process.argv.slice(1)) {
      if (!fs.existsSync(file)) continue;
      const { groups } = JSON.parse(fs.readFileSync(file, "utf8"));
      const build = file.includes("development") ? "[development build] " : "";
      for (const [group, c] of Object.entries(groups)) {
        const name = build + group;
        const extra = c.skip + c.todo ? `, ${c.skip + c.todo} skipped` : "";
        console.log(`  ${name.padEnd(64)} ${c.pass} passed, ${c.fail} failed${extra}`);
      }
    }' "${COUNT_FILES[@]}"
fi

if [ "$FAILED" -gt 0 ] || [ -n "${SETUP_FAILED:-}" ]; then
  echo "FAILED: $FAILED stage(s) failed (logs in tests/artifacts/logs/)"
  RC=1
else
  echo "all stages passed in ${TOTAL_SECONDS}s"
  RC=0
fi

# Closing line over all runners: cargo native + wasm (Node, Chromium) + node:test.
node -e '
  const fs = require("fs");
  let pass = 0, fail = 0, skip = 0;
  for (const log of ["cargo-native", "server-sqlite", "server-postgres", "wasm-node-chromium"]) {
    const file = `${process.argv[1]}/${log}.log`;
    if (!fs.existsSync(file)) continue;
    for (const m of fs.readFileSync(file, "utf8").matchAll(/^test result: \S+ (\d+) passed; (\d+) failed; (\d+) ignored/gm)) {
      pass += +m[1]; fail += +m[2]; skip += +m[3];
    }
  }
  for (const file of process.argv.slice(2)) {
    if (!fs.existsSync(file)) continue;
    const { totals } = JSON.parse(fs.readFileSync(file, "utf8"));
    pass += totals.pass; fail += totals.fail; skip += totals.skip + totals.todo;
  }
  console.log(`total: ${pass} passed, ${fail} failed, ${skip} skipped`);
' "$LOGS" "${COUNT_FILES[@]}"
exit "$RC"
