#!/usr/bin/env bash
# Installs what the build and the tests need, and nothing that is already there.
# Idempotent: a second run only checks (a few seconds) and prints "skip" for every item.
#   - Rust target wasm32-unknown-unknown, clippy    (rustup)
#   - wasm-bindgen-cli 0.2.130                       (cargo install; must equal the crate's pin)
#   - Debian chromium + chromium-driver              (apt-get; for the browser test suites)
#   - npm devDependencies (binaryen, playwright-core, typescript)  (npm ci)
#   - Debian postgresql                              (apt-get; the server suite's throwaway cluster)
#   - nightly + rust-src, wasm-tools                 (rustup, cargo install; every package wasm build, the MVP gate)
#   - Debian webkit2gtk-driver, firefox-esr, xvfb    (apt-get; the `engines` stage: WebKit and Gecko)
#   - geckodriver 0.36.0                             (cargo install --locked; Firefox's WebDriver, not in Debian)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

WASM_BINDGEN_VERSION="0.2.130"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
case ":$PATH:" in *":$CARGO_BIN:"*) ;; *) export PATH="$CARGO_BIN:$PATH" ;; esac

say() { printf 'setup: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    say "need root for: $* (not root and no sudo)" >&2
    return 1
  fi
}

for tool in rustup cargo node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    say "missing required tool '$tool' (expected on this kind of machine)" >&2
    exit 1
  fi
done

# require(esm) without a flag, used by the package tests, needs Node >= 20.19.
node -e '
  const [maj, min] = process.versions.node.split(".").map(Number);
  if (maj < 20 || (maj === 20 && min < 19)) {
    console.error(`setup: Node ${process.versions.node} is too old: need >= 20.19`);
    process.exit(1);
  }'

# 1. wasm target ---------------------------------------------------------------
installed_targets="$(rustup target list --installed)"
if grep -qx 'wasm32-unknown-unknown' <<<"$installed_targets"; then
  say "skip   rustup target wasm32-unknown-unknown (installed)"
else
  say "install rustup target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# clippy (part of rustup's default profile; a minimal profile lacks it)
if cargo clippy --version >/dev/null 2>&1; then
  say "skip   rustup component clippy (installed)"
else
  say "install rustup component clippy"
  rustup component add clippy
fi

# 2. wasm-bindgen-cli (wasm-bindgen + wasm-bindgen-test-runner) -----------------
tool_version() { "$1" --version 2>/dev/null | awk '{print $2}' || true; }
if [ "$(tool_version wasm-bindgen)" = "$WASM_BINDGEN_VERSION" ] &&
   [ "$(tool_version wasm-bindgen-test-runner)" = "$WASM_BINDGEN_VERSION" ]; then
  say "skip   wasm-bindgen-cli $WASM_BINDGEN_VERSION (installed)"
else
  say "install wasm-bindgen-cli $WASM_BINDGEN_VERSION (found: '$(tool_version wasm-bindgen)'; takes 2-5 min cold)"
  # No --locked: one dependency pinned by the published lockfile is not served by the registry.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
  if [ "$(tool_version wasm-bindgen)" != "$WASM_BINDGEN_VERSION" ]; then
    say "wasm-bindgen on PATH is '$(command -v wasm-bindgen)' version '$(tool_version wasm-bindgen)', expected $WASM_BINDGEN_VERSION" >&2
    exit 1
  fi
fi

# 3. Chromium + chromedriver (Debian packages) ----------------------------------
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  say "skip   chromium + chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver present)"
else
  say "install chromium chromium-driver (apt-get)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver
fi

# 4. npm devDependencies ---------------------------------------------------------
# node_modules/.package-lock.json is rewritten by every npm install: when it is missing or older
# than package-lock.json, node_modules does not reflect the lockfile.
if [ -f node_modules/.package-lock.json ] && ! [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "skip   npm ci (node_modules up to date with package-lock.json)"
else
  say "install npm packages (npm ci)"
  if ! npm ci --no-audit --no-fund; then
    say "npm ci failed; falling back to npm install"
    npm install --no-audit --no-fund
  fi
  touch node_modules/.package-lock.json
fi

# 5. PostgreSQL server binaries (Debian; scripts/postgres.sh starts a throwaway cluster) --------
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  say "skip   postgresql ($(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1))"
else
  say "install postgresql (apt-get)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
fi

# 6. The package's wasm builds (scripts/build.mjs: every module, default and MVP): nightly + rust-src
# for -Zbuild-std and -Cpanic=immediate-abort, and
# wasm-tools for the `validate --features mvp` gate. Nightly's own wasm32 std is not needed
# (build-std compiles std from rust-src).
# Pinned: both flags are unstable (keep in step with NIGHTLY in scripts/build/wasm.mjs).
NIGHTLY=nightly-2026-05-19
if rustup toolchain list | grep -q "^$NIGHTLY"; then
  say "skip   rustup toolchain $NIGHTLY (installed)"
else
  say "install rustup toolchain $NIGHTLY (minimal profile)"
  rustup toolchain install "$NIGHTLY" --profile minimal
fi
if rustup component list --toolchain "$NIGHTLY" --installed | grep -q '^rust-src'; then
  say "skip   rustup component rust-src ($NIGHTLY; installed)"
else
  say "install rustup component rust-src ($NIGHTLY)"
  rustup component add rust-src --toolchain "$NIGHTLY"
fi
if wasm-tools --version >/dev/null 2>&1; then
  say "skip   wasm-tools ($(wasm-tools --version))"
else
  # Only the `validate` subcommand: a fraction of the full tool's compile time.
  say "install wasm-tools (cargo install, feature validate only)"
  cargo install wasm-tools --locked --no-default-features --features validate ||
    cargo install wasm-tools --no-default-features --features validate
fi

# 7. Other engines (the `engines` stage, tests/engines/): WebKitGTK's WebDriver with its MiniBrowser
# (webkit2gtk-driver; MiniBrowser ships in its dependency libwebkit2gtk-4.1-0), Firefox ESR, and
# Xvfb (MiniBrowser has no headless mode). Debian bookworm packages no geckodriver: it is built
# from crates.io, pinned, with its published lockfile.
WEBKIT_MINIBROWSER="$(dpkg -L libwebkit2gtk-4.1-0 2>/dev/null | grep '/MiniBrowser$' | head -n 1 || true)"
if [ -x /usr/bin/WebKitWebDriver ] && [ -n "$WEBKIT_MINIBROWSER" ] && [ -x "$WEBKIT_MINIBROWSER" ] && [ -x /usr/bin/firefox-esr ] && [ -x /usr/bin/Xvfb ]; then
  say "skip   webkit2gtk-driver + firefox-esr + xvfb (WebKitGTK $(dpkg-query -W -f='${Version}' webkit2gtk-driver 2>/dev/null), $(/usr/bin/firefox-esr --version 2>/dev/null))"
else
  say "install webkit2gtk-driver firefox-esr xvfb (apt-get)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y webkit2gtk-driver firefox-esr xvfb
fi
GECKODRIVER_VERSION="0.36.0"
if [ "$(geckodriver --version 2>/dev/null | awk 'NR == 1 { print $2 }')" = "$GECKODRIVER_VERSION" ]; then
  say "skip   geckodriver $GECKODRIVER_VERSION (installed)"
else
  say "install geckodriver $GECKODRIVER_VERSION (cargo install --locked; about 2 min cold)"
  cargo install geckodriver --version "$GECKODRIVER_VERSION" --locked --force
fi

say "done"
