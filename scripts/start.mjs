#!/usr/bin/env node
// `npm start`: everything a fresh machine needs to run the demo against the reference server.
//
//   1. bash scripts/setup.sh            (idempotent tool install)
//   2. node scripts/build.mjs --if-changed   (the wasm package -> pkg/, unless built from the same inputs)
//   3. node www/build.mjs               (the demo page -> www/dist/)
//   4. cargo build -p task-projection-server --bin task-projection-server
//   5. task-projection-server --seed-demo --simulator --www www/dist --pkg pkg   (SQLite, default file)
//
// The binary is found through `cargo metadata` (target_directory, which honours CARGO_TARGET_DIR).
// Extra arguments go to the server, e.g. `npm start -- --port 9000`. PORT and HOST env vars too.
// Ctrl-C stops the server.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cargoBin = path.join(process.env.CARGO_HOME ?? path.join(process.env.HOME ?? '', '.cargo'), 'bin');
const env = { ...process.env, PATH: `${cargoBin}${path.delimiter}${process.env.PATH ?? ''}` };

function step(title, cmd, args) {
  console.log(`\nstart: ${title}\nstart: $ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (r.error || r.status !== 0) {
    console.error(`start: ${title} failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
    process.exit(1);
  }
}

function serverBinary(cwd = root) {
  const meta = JSON.parse(execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], { cwd, env, encoding: 'utf8' }));
  const exe = process.platform === 'win32' ? '.exe' : '';
  return path.join(meta.target_directory, 'debug', `task-projection-server${exe}`);
}

step('install tools', 'bash', ['scripts/setup.sh']);
step('build the wasm package (skipped when its inputs are unchanged)', process.execPath, ['scripts/build.mjs', '--if-changed']);
step('build the demo page', process.execPath, ['www/build.mjs']);
step('build the server', 'cargo', ['build', '-p', 'task-projection-server', '--bin', 'task-projection-server']);

const bin = serverBinary();
const args = ['--seed-demo', '--simulator', '--www', 'www/dist', '--pkg', 'pkg'];
if (process.env.PORT) args.push('--port', process.env.PORT);
if (process.env.HOST) args.push('--host', process.env.HOST);
args.push(...process.argv.slice(2));
console.log(`\nstart: $ ${path.relative(root, bin)} ${args.join(' ')}`);
const server = spawn(bin, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
let announced = false;
server.stdout.setEncoding('utf8');
server.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const url = !announced && /task-projection-server listening on (http:\/\/\S+)/.exec(chunk)?.[1];
  if (url) {
    announced = true;
    console.log(`\nstart: demo at ${url.replace('127.0.0.1', 'localhost')}/  (database: task-projection.db; Ctrl-C to stop)`);
  }
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => {
  if (!announced) console.error('start: the server exited before it was listening');
  process.exit(code ?? (signal ? 1 : 0));
});
