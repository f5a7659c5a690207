// The consumer README (docs/package-readme.md, shipped as pkg/README.md) runs as written: every
// fenced block is extracted (tests/js/readme-blocks.mjs has the convention) into
// tests/artifacts/readme/, where `task-projection` resolves to the built pkg/ exactly as in an
// app. The ```ts blocks are type-checked with strict tsc and run in Node, the ```js blocks run in
// Node, each in a fresh process with the examples' server (tests/js/readme-preamble.mjs), and
// every `console.log(x); // → value` must print value. The ```tsx blocks are a Next.js app that
// tests/packaging/next.test.mjs builds (webpack, Turbopack, strict tsc) and renders in Chromium.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { transformSync } from 'esbuild';
import { NODE_LANGS, codeBlocks, conventionError, expectations, nextPath } from './readme-blocks.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const source = path.join(root, 'docs', 'package-readme.md');
const pkgDir = path.join(root, 'pkg');
const work = path.join(root, 'tests', 'artifacts', 'readme');
const preamble = pathToFileURL(path.join(here, 'readme-preamble.mjs')).href;
const tsc = path.join(root, 'node_modules', '.bin', 'tsc');

const markdown = fs.readFileSync(source, 'utf8');
const blocks = codeBlocks(markdown);
const nodeBlocks = blocks.filter((b) => NODE_LANGS.has(b.lang) && !b.flags.includes('no-run'));
const tsBlocks = nodeBlocks.filter((b) => b.lang === 'ts');

// The extracted blocks, beside a node_modules/task-projection link to pkg/ (Node and tsc resolve
// the package through its package.json "exports", as in an app).
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(path.join(work, 'node_modules'), { recursive: true });
fs.symlinkSync(path.relative(path.join(work, 'node_modules'), pkgDir), path.join(work, 'node_modules', 'task-projection'), 'dir');
const fileOf = (block, ext) => path.join(work, `L${block.line}${ext}`);
for (const block of nodeBlocks) {
  if (block.lang === 'ts') {
    // A Next.js config (`// next.config.ts` on its first line) runs in Node: it is checked with
    // Node's types (the directive takes the path comment's line: the lines stay the README's).
    const checked = block.code.startsWith('// next.config.ts\n') ? block.code.replace('// next.config.ts', '/// <reference types="node" />') : block.code;
    fs.writeFileSync(fileOf(block, '.mts'), checked);
    const { code } = transformSync(block.code, {
      loader: 'ts', format: 'esm', target: 'es2022', sourcemap: 'inline', sourcefile: `package-readme.md:L${block.line}.mts`,
    });
    fs.writeFileSync(fileOf(block, '.run.mjs'), code);
  } else {
    fs.writeFileSync(fileOf(block, '.run.mjs'), block.code);
  }
}
// As strict as tests/types (a consumer's tsconfig), with the DOM's fetch and WebSocket.
fs.writeFileSync(path.join(work, 'tsconfig.json'), `${JSON.stringify({
  compilerOptions: {
    target: 'ES2022', lib: ['ES2022', 'DOM'], module: 'nodenext', moduleResolution: 'nodenext', moduleDetection: 'force',
    strict: true, noUncheckedIndexedAccess: true, noEmit: true, skipLibCheck: false, types: [],
  },
  files: tsBlocks.map((b) => path.basename(fileOf(b, '.mts'))),
}, null, 2)}\n`);

/** The value of an expectation's literal (`// → { a: 1 }`). */
function literal(text, where) {
  try {
    return new Function(`return (${text});`)();
  } catch (e) {
    throw new Error(`${where}: "// → ${text}" is not a JavaScript value (${e.message})`);
  }
}

describe('the consumer README (docs/package-readme.md)', () => {
  test('is what the package ships as pkg/README.md', () => {
    assert.ok(fs.existsSync(path.join(pkgDir, 'package.json')), 'pkg/ is not built: run node scripts/build.mjs');
    const shipped = fs.readFileSync(path.join(pkgDir, 'README.md'), 'utf8');
    assert.ok(shipped === markdown, 'pkg/README.md differs from docs/package-readme.md: rebuild (node scripts/build.mjs --if-changed)');
    assert.ok(JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).files.includes('README.md'));
  });

  test('every code block runs: ts, js or tsx (only shell commands are marked no-run)', () => {
    const broken = blocks.map((b) => [b, conventionError(b)]).filter(([, e]) => e !== null);
    assert.deepEqual(broken.map(([b, e]) => `line ${b.line}: ${e}`), []);
    assert.ok(nodeBlocks.length >= 8, `${nodeBlocks.length} Node blocks`);
    assert.ok(blocks.filter((b) => b.lang === 'tsx').length >= 2, 'the React / Next.js example');
  });

  test('the ts blocks type-check (strict tsc, the package\'s declarations)', () => {
    const r = spawnSync(tsc, ['-p', work, '--pretty', 'false'], { cwd: work, encoding: 'utf8' });
    // tsc reports `L<fence>.mts(<line>,<col>): error ...`: give the README's own line.
    const errors = `${r.stdout}${r.stderr}`.replace(/^L(\d+)\.mts\((\d+),(\d+)\)/gm, (_, fence, line, col) => `docs/package-readme.md:${Number(fence) + Number(line)}:${col}`);
    assert.equal(r.status, 0, `tsc failed:\n${r.error ?? ''}${errors}`);
  });

  test('the tsx blocks are files of one Next.js app, with a page (built and rendered by tests/packaging/next.test.mjs)', () => {
    const paths = blocks.filter((b) => b.lang === 'tsx').map(nextPath);
    assert.equal(new Set(paths).size, paths.length, `each file once: ${paths.join(', ')}`);
    assert.ok(paths.some((p) => /(^|\/)page\.tsx$/.test(p)), `a page among ${paths.join(', ')}`);
  });

  for (const block of nodeBlocks) {
    const { checks } = expectations(block);
    test(`line ${block.line} (${block.lang}) runs in Node and prints what its comments say (${checks.length} checks)`, () => {
      const record = path.join(work, `L${block.line}.record`);
      const r = spawnSync(process.execPath, ['--enable-source-maps', '--import', preamble, fileOf(block, '.run.mjs')], {
        cwd: work, encoding: 'utf8', timeout: 30_000,
        env: { ...process.env, README_RECORD: record, README_DOM: block.code.includes('task-projection/devtools') ? '1' : '' },
      });
      const where = (line) => `docs/package-readme.md:${block.line + line}`;
      assert.equal(r.status, 0, `the block at line ${block.line} failed (${r.signal ?? `exit ${r.status}`}; README line = ${block.line} + the block's line):\n${r.stderr}`);
      const printed = v8.deserialize(fs.readFileSync(record));
      assert.equal(printed.length, checks.length, `printed ${printed.length} times, ${checks.length} "// →" comments:\n${r.stdout}`);
      checks.forEach((check, i) => {
        const args = printed[i];
        assert.equal(args.length, 1, `${where(check.line)}: console.log with one argument`);
        assert.ok(!('unserializable' in args[0]), `${where(check.line)}: printed ${args[0].unserializable}`);
        assert.deepStrictEqual(args[0].value, literal(check.expected, where(check.line)), `${where(check.line)}: printed something other than its comment says`);
      });
    });
  }
});
