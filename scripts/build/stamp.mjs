// `--if-changed` (npm start): the build is skipped when pkg/ was built from exactly the inputs
// there are now. The inputs are every file the build reads from the repository (the crate, the
// JS, the build scripts and static entries, the README (docs/package-readme.md) and its guides
// (docs/guides/), its image and
// LICENSE it ships), the lockfiles and the tool versions; their digest is written to
// target/pkg-inputs.sha256 after a successful build (not into pkg/, which is shipped and is
// emptied when a build starts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pkgDir, root } from './common.mjs';

const INPUT_DIRS = ['src', 'js', 'scripts/build', 'docs/guides'];
const INPUT_FILES = ['scripts/build.mjs', 'Cargo.toml', 'Cargo.lock', 'package-lock.json', 'docs/package-readme.md', 'docs/devtools.png', 'LICENSE', 'node_modules/binaryen/package.json', 'node_modules/esbuild/package.json'];
const stampPath = (targetDir) => path.join(targetDir, 'pkg-inputs.sha256');

function files(dir, out) {
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) files(p, out);
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** The digest of the build's inputs (paths and contents) and of `extra` (tool versions, flags). */
export function inputsDigest(extra) {
  const hash = crypto.createHash('sha256');
  hash.update(JSON.stringify(extra));
  const all = [...INPUT_DIRS.flatMap((d) => files(path.join(root, d), [])), ...INPUT_FILES.map((f) => path.join(root, f))];
  for (const p of all) {
    hash.update(`\0${path.relative(root, p)}\0`);
    hash.update(fs.existsSync(p) ? fs.readFileSync(p) : 'absent');
  }
  return hash.digest('hex');
}

/** Whether pkg/ holds a build of exactly these inputs. */
export function upToDate(targetDir, digest) {
  const at = stampPath(targetDir);
  return fs.existsSync(at) && fs.readFileSync(at, 'utf8').trim() === digest
    && fs.existsSync(path.join(pkgDir, 'package.json')) && fs.existsSync(path.join(pkgDir, 'task_projection_bg.wasm'));
}

/** Records that pkg/ was built from these inputs (after a successful build). */
export function writeStamp(targetDir, digest) {
  fs.mkdirSync(targetDir, { recursive: true });
  fs.writeFileSync(stampPath(targetDir), `${digest}\n`);
}

/** Forgets the record (a build started: pkg/ is about to change). */
export function clearStamp(targetDir) {
  fs.rmSync(stampPath(targetDir), { force: true });
}
