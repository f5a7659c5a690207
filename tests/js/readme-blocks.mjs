// The fenced code blocks of the consumer README (docs/package-readme.md, shipped as
// pkg/README.md) and what each one is, for tests/js/readme.test.mjs (Node) and
// tests/packaging/prepare.mjs (the Next.js fixture). The convention, by info string:
//   ```ts    type-checked with strict tsc, then run in Node (types stripped by esbuild);
//   ```js    run in Node as an ES module;
//   ```tsx   a file of a Next.js app: its first line is `// app/<path>.tsx`, where it goes;
//   ```<anything> no-run   not run: only for shell commands (`sh`, `bash`, `shell`).
// Any other block fails the test. In a block that runs, `console.log(x); // → value` (the
// comment on the same line or alone on the next) is an expectation: x must equal value, a
// JavaScript literal; every console.log of a block has one.

/** The README's fenced blocks: `{ line, lang, flags, code }`, `line` the 1-based line of the opening fence. */
export function codeBlocks(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,}|~{3,})(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [lang = '', ...flags] = open[2].trim().split(/\s+/).filter(Boolean);
    const body = [];
    let j = i + 1;
    while (j < lines.length && !lines[j].startsWith(open[1])) body.push(lines[j++]);
    if (j === lines.length) throw new Error(`README line ${i + 1}: the code block is never closed`);
    blocks.push({ line: i + 1, lang, flags, code: `${body.join('\n')}\n` });
    i = j;
  }
  return blocks;
}

export const SHELL = new Set(['sh', 'bash', 'shell', 'console']);
export const NODE_LANGS = new Set(['ts', 'js']);

/** Why a block breaks the convention, or null. */
export function conventionError(block) {
  if (block.flags.includes('no-run')) {
    return SHELL.has(block.lang) ? null : `only shell commands may be marked no-run (this is \`${block.lang || 'untagged'}\`)`;
  }
  if (NODE_LANGS.has(block.lang)) {
    const unchecked = expectations(block).unchecked;
    return unchecked.length ? `console.log without a "// → value" comment on block line ${unchecked.join(', ')}` : null;
  }
  if (block.lang === 'tsx') return nextPath(block) ? null : 'a tsx block starts with its file path: // app/<path>.tsx';
  return `\`${block.lang || 'untagged'}\` blocks cannot run: use ts, js or tsx (or mark a shell command no-run)`;
}

/** A tsx block's path in the app (`app/...`), from its first line, or null. */
export function nextPath(block) {
  const m = /^\/\/ (app\/[\w./[\]-]+\.tsx?)\s*$/.exec(block.code.split('\n')[0]);
  return m && !m[1].split('/').includes('..') ? m[1] : null;
}

/**
 * The expectations of a block: `checks` = `[{ line, expected }]` in source order (`line` within
 * the block, `expected` the literal's source), `unchecked` = block lines with a console.log and
 * no expectation.
 */
export function expectations(block) {
  const lines = block.code.split('\n');
  const checks = [];
  const unchecked = [];
  lines.forEach((text, i) => {
    if (!/\bconsole\.log\(/.test(text)) return;
    const same = /\/\/ → (.+)$/.exec(text);
    const next = /^\s*\/\/ → (.+)$/.exec(lines[i + 1] ?? '');
    const found = same ?? next;
    if (found) checks.push({ line: i + 1, expected: found[1].trim() });
    else unchecked.push(i + 1);
  });
  return { checks, unchecked };
}

/** The lines of `markdown` outside its fenced code blocks, with their 1-based numbers. */
function prose(markdown) {
  const out = [];
  let fence = null;
  markdown.split('\n').forEach((text, i) => {
    const open = /^(`{3,}|~{3,})/.exec(text);
    if (fence === null && open) fence = open[1];
    else if (fence !== null && text.startsWith(fence)) fence = null;
    else if (fence === null) out.push({ line: i + 1, text });
  });
  return out;
}

/** The anchors of a document's headings, as GitHub and npm make them (`## Next.js (App Router)` → `nextjs-app-router`). */
export function headingSlugs(markdown) {
  const slugs = new Set();
  for (const { text } of prose(markdown)) {
    const m = /^#{1,6}\s+(.*)$/.exec(text);
    if (m) slugs.add(m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-'));
  }
  return slugs;
}

/** The targets of a document's inline links and images outside code: `[{ line, target }]`. */
export function markdownLinks(markdown) {
  const links = [];
  for (const { line, text } of prose(markdown)) {
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) links.push({ line, target: m[1] });
  }
  return links;
}
