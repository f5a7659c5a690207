// The wasm-bindgen-test browser suite (tests/wasm_browser.rs, `run_in_browser`) in Gecko: headless
// Firefox ESR through geckodriver, as wasm-bindgen-test-runner 0.2.130 drives it:
//
//   GECKODRIVER=~/.cargo/bin/geckodriver WASM_BINDGEN_TEST_WEBDRIVER_JSON=tests/engines/wasm-bindgen-firefox.json \
//     cargo test --target wasm32-unknown-unknown --test wasm_browser
//
// The runner reads its capabilities from the file WASM_BINDGEN_TEST_WEBDRIVER_JSON names (by
// default ./webdriver.json, which holds Chromium's options for the wasm-node-chromium stage) and
// adds `-headless` to `moz:firefoxOptions` itself; wasm-bindgen-firefox.json pins the binary to
// Firefox ESR (without it geckodriver starts whatever `firefox` is on PATH). The runner drives
// geckodriver, chromedriver, msedgedriver and safaridriver only, not WebKitGTK's WebKitWebDriver,
// so this suite has no WebKit run (the package's pages have: pages.test.mjs). Each Rust test is a
// subtest.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../scripts/serve.mjs';
import { missingBinaries, selectedEngines } from './webdriver.mjs';

const GECKODRIVER = process.env.GECKODRIVER ?? path.join(process.env.CARGO_HOME ?? path.join(os.homedir(), '.cargo'), 'bin', 'geckodriver');
const skip = !selectedEngines().includes('firefox') && `not in ENGINES=${process.env.ENGINES}`;
// A cold run compiles the suite for wasm32 first (the wasm-node-chromium stage of scripts/test.sh
// has already built it, so there it only links and runs).
const TIMEOUT_MS = 10 * 60_000;

function cargoTest() {
  return new Promise((resolve) => {
    const env = {
      ...process.env,
      GECKODRIVER,
      WASM_BINDGEN_TEST_WEBDRIVER_JSON: path.join(repoRoot, 'tests/engines/wasm-bindgen-firefox.json'),
      CARGO_TERM_COLOR: 'never',
    };
    delete env.CHROMEDRIVER;
    const child = spawn('cargo', ['test', '--target', 'wasm32-unknown-unknown', '--test', 'wasm_browser'], {
      cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const kill = () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    };
    process.on('exit', kill);
    const timer = setTimeout(() => {
      out += `\n(killed: no result after ${TIMEOUT_MS / 1000} s)\n`;
      kill();
    }, TIMEOUT_MS);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', kill);
      resolve({ code, signal, out });
    });
  });
}

test('firefox: wasm-bindgen-test browser suite (tests/wasm_browser.rs)', { skip, timeout: TIMEOUT_MS + 60_000 }, async (t) => {
  const missing = missingBinaries('firefox');
  assert.deepEqual(missing, [], 'geckodriver and Firefox ESR installed (bash scripts/setup.sh)');
  const { code, signal, out } = await cargoTest();
  const tail = out.split('\n').slice(-40).join('\n');
  assert.match(out, /^Running headless tests in Firefox/m, `the runner used geckodriver:\n${tail}`);
  const results = [...out.matchAll(/^test (\S+) \.\.\. (ok|FAILED|ignored)\b/gm)];
  assert.ok(results.length > 0, `no test ran:\n${tail}`);
  for (const [, name, verdict] of results) {
    await t.test(name, { skip: verdict === 'ignored' }, () => {
      if (verdict === 'FAILED') assert.fail(`failed in Firefox:\n${tail}`);
    });
  }
  assert.match(out, /^test result: ok\./m, tail);
  assert.equal(code, 0, `cargo test exited ${code ?? signal}:\n${tail}`);
});
