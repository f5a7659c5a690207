#!/usr/bin/env bash
# Packaging tests: the packed tarball in real consumers (tests/packaging/):
#   build pkg/ (skip with --no-build when the build stage just ran) -> npm pack -> install into the
#   fixture apps (npm ci from their committed lockfiles, skipped when node_modules matches; the
#   tarball itself every run; the package README's tsx blocks into next-app/app/readme/) ->
#   node:test: Next.js (webpack and Turbopack: server component, route handler, edge runtime, client
#   components, the README's React example with and without a WebSocket server and answering its
#   question, tsc --noEmit),
#   Vite, Node ESM/CJS, all in headless Chromium where a page is involved; which build of the store
#   each resolves (`next dev` and `vite` the development build with `explain`; `next build`, `vite
#   build` and plain `node` the production one, its wasm byte for byte, no development wasm in the
#   output). Screenshots: tests/artifacts/packaging/*.png.
# Needs only the npm registry (cold install) and works with NEXT_TELEMETRY_DISABLED=1.
#   bash scripts/test-packaging.sh [--no-build] [node --test reporter args]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export NEXT_TELEMETRY_DISABLED=1
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
case ":$PATH:" in *":$CARGO_BIN:"*) ;; *) export PATH="$CARGO_BIN:$PATH" ;; esac

T0=$(date +%s.%N)
if [ "${1:-}" = "--no-build" ]; then
  shift
else
  node scripts/build.mjs
fi
node tests/packaging/prepare.mjs
# Extra arguments replace the default reporter (e.g. spec to stdout + scripts/node-test-counts.mjs).
[ "$#" -gt 0 ] || set -- --test-reporter=spec
node --test --test-concurrency=1 "$@" \
  tests/packaging/node.test.mjs tests/packaging/vite.test.mjs tests/packaging/next.test.mjs
awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "packaging: all passed in %.1f s\n", b - a }'
