// The consumer README (docs/package-readme.md, shipped as pkg/README.md) and its guides
// (docs/guides/*.md, shipped as pkg/guides/) run as written: every fenced block is extracted
// (tests/js/readme-blocks.mjs has the convention) into tests/artifacts/readme/, where
// `task-projection` resolves to the built pkg/ exactly as in an app. The ```ts blocks are
// type-checked with strict tsc and run in Node, the ```js blocks run in Node, each in a fresh
// process with the examples' server (tests/js/readme-preamble.mjs), and every
// `console.log(x); // → value` must print value. The ```tsx blocks of all of them are one Next.js
// app that tests/packaging/next.test.mjs builds (webpack, Turbopack, strict tsc) and renders in
// Chromium. Every relative link of a document names a shipped file, and a heading in it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { transformSync } from 'esbuild';
import { NODE_LANGS, codeBlocks, conventionError, expectations, headingSlugs, markdownLinks, nextPath } from './readme-blocks.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const pkgDir = path.join(root, 'pkg');
const work = path.join(root, 'tests', 'artifacts', 'readme');
const preamble = pathToFileURL(path.join(here, 'readme-preamble.mjs')).href;
const tsc = path.join(root, 'node_modules', '.bin', 'tsc');

/** The documents: the README, then each guide; `name` is its path in the package, `id` a file-name prefix. */
const guides = fs.readdirSync(path.join(root, 'docs', 'guides')).filter((f) => f.endsWith('.md')).sort();
const documents = [
  { name: 'README.md', source: path.join(root, 'docs', 'package-readme.md'), id: 'readme' },
  ...guides.map((g) => ({ name: `guides/${g}`, source: path.join(root, 'docs', 'guides', g), id: g.replace(/\.md$/, '') })),
].map((d) => ({ ...d, markdown: fs.readFileSync(d.source, 'utf8') }));
const blocks = documents.flatMap((doc) => codeBlocks(doc.markdown).map((b) => ({ ...b, doc })));
const nodeBlocks = blocks.filter((b) => NODE_LANGS.has(b.lang) && !b.flags.includes('no-run'));
const tsBlocks = nodeBlocks.filter((b) => b.lang === 'ts');
/** Where a block's line is, as a reader finds it: `docs/<file>:<line>`. */
const at = (block, line = 0) => `${path.relative(root, block.doc.source)}:${block.line + line}`;

// The extracted blocks, beside a node_modules/task-projection link to pkg/ (Node and tsc resolve
// the package through its package.json "exports", as in an app).
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(path.join(work, 'node_modules'), { recursive: true });
fs.symlinkSync(path.relative(path.join(work, 'node_modules'), pkgDir), path.join(work, 'node_modules', 'task-projection'), 'dir');
const fileOf = (block, ext) => path.join(work, `${block.doc.id}-L${block.line}${ext}`);
for (const block of nodeBlocks) {
  if (block.lang === 'ts') {
    // A Next.js config (`// next.config.ts` on its first line) runs in Node: it is checked with
    // Node's types (the directive takes the path comment's line: the lines stay the README's).
    const checked = block.code.startsWith('// next.config.ts\n') ? block.code.replace('// next.config.ts', '/// <reference types="node" />') : block.code;
    fs.writeFileSync(fileOf(block, '.mts'), checked);
    const { code } = transformSync(block.code, {
      loader: 'ts', format: 'esm', target: 'es2022', sourcemap: 'inline', sourcefile: `${block.doc.name}:L${block.line}.mts`,
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

describe('the consumer README (docs/package-readme.md) and its guides (docs/guides/)', () => {
  test('are what the package ships as pkg/README.md and pkg/guides/; the README is a quick start of at most 20 KB', () => {
    assert.ok(fs.existsSync(path.join(pkgDir, 'package.json')), 'pkg/ is not built: run node scripts/build.mjs');
    for (const doc of documents) {
      const shipped = path.join(pkgDir, doc.name);
      assert.ok(fs.existsSync(shipped) && fs.readFileSync(shipped, 'utf8') === doc.markdown, `pkg/${doc.name} differs from ${path.relative(root, doc.source)}: rebuild (node scripts/build.mjs --if-changed)`);
    }
    assert.deepEqual(fs.readdirSync(path.join(pkgDir, 'guides')).sort(), guides, 'pkg/guides/ holds the guides and nothing else');
    const { files } = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
    assert.ok(files.includes('README.md') && files.includes('guides'), `files: ${files.join(', ')}`);
    const bytes = Buffer.byteLength(documents[0].markdown);
    assert.ok(bytes <= 20_000, `the README is ${bytes} bytes`);
    for (const guide of guides) assert.ok(documents[0].markdown.includes(`](guides/${guide})`), `the README links guides/${guide}`);
  });

  test('every relative link names a file the package ships, and a heading of it', () => {
    const shipped = new Set(JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).files);
    const slugs = new Map(documents.map((d) => [d.name, headingSlugs(d.markdown)]));
    const broken = [];
    for (const doc of documents) {
      for (const { line, target } of markdownLinks(doc.markdown)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split('#');
        const name = file === '' ? doc.name : path.posix.normalize(path.posix.join(path.posix.dirname(doc.name), file));
        const top = name.split('/')[0];
        if (!slugs.has(name) && !shipped.has(name) && !shipped.has(top)) broken.push(`${doc.name}:${line}: ${target} (no ${name} in the package)`);
        else if (anchor !== undefined && !slugs.get(name)?.has(anchor)) broken.push(`${doc.name}:${line}: ${target} (no heading #${anchor} in ${name})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('every code block runs: ts, js or tsx (only shell commands are marked no-run)', () => {
    const broken = blocks.map((b) => [b, conventionError(b)]).filter(([, e]) => e !== null);
    assert.deepEqual(broken.map(([b, e]) => `${at(b)}: ${e}`), []);
    assert.ok(nodeBlocks.length >= 8, `${nodeBlocks.length} Node blocks`);
    assert.ok(blocks.filter((b) => b.lang === 'tsx').length >= 2, 'the React / Next.js example');
  });

  test('the ts blocks type-check (strict tsc, the package\'s declarations)', () => {
    const r = spawnSync(tsc, ['-p', work, '--pretty', 'false'], { cwd: work, encoding: 'utf8' });
    // tsc reports `<doc>-L<fence>.mts(<line>,<col>): error ...`: give the document's own line.
    const byFile = new Map(tsBlocks.map((b) => [path.basename(fileOf(b, '.mts')), b]));
    const errors = `${r.stdout}${r.stderr}`.replace(/^([\w-]+-L\d+\.mts)\((\d+),(\d+)\)/gm, (whole, file, line, col) => (byFile.has(file) ? `${at(byFile.get(file), Number(line))}:${col}` : whole));
    assert.equal(r.status, 0, `tsc failed:\n${r.error ?? ''}${errors}`);
  });

  test('the tsx blocks are files of one Next.js app, with a page (built and rendered by tests/packaging/next.test.mjs)', () => {
    const paths = blocks.filter((b) => b.lang === 'tsx').map(nextPath);
    assert.equal(new Set(paths).size, paths.length, `each file once: ${paths.join(', ')}`);
    assert.ok(paths.some((p) => /(^|\/)page\.tsx$/.test(p)), `a page among ${paths.join(', ')}`);
  });

  for (const block of nodeBlocks) {
    const { checks } = expectations(block);
    test(`${block.doc.name} line ${block.line} (${block.lang}) runs in Node and prints what its comments say (${checks.length} checks)`, () => {
      const record = fileOf(block, '.record');
      const r = spawnSync(process.execPath, ['--enable-source-maps', '--import', preamble, fileOf(block, '.run.mjs')], {
        cwd: work, encoding: 'utf8', timeout: 30_000,
        env: { ...process.env, README_RECORD: record, README_DOM: block.code.includes('task-projection/devtools') ? '1' : '' },
      });
      const where = (line) => at(block, line);
      assert.equal(r.status, 0, `the block at ${at(block)} failed (${r.signal ?? `exit ${r.status}`}; its line = ${block.line} + the block's line):\n${r.stderr}`);
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
