// Writes the benchmark inputs to a folder (default target/bench-data/), so the native criterion
// bench, Node and Chromium measure the same bytes:
//   events-<n>.json  { history: { taskId, session, turns, messages }, pass, statelessEvents }
//   snapshot.json    the ~30 MB boot snapshot (JSON text)
// Deterministic: the same files on every machine. `node bench/gen.mjs [dir]`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIZES, bootSnapshot, eventPass, passLength, sessionHistory, statelessEvents } from './workload.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const defaultDir = path.join(root, 'target', 'bench-data');
const VERSION = '1';


export function generate(dir = defaultDir) {
  fs.mkdirSync(dir, { recursive: true });
  const stamp = path.join(dir, 'VERSION');
  const workload = fs.readFileSync(new URL('./workload.mjs', import.meta.url), 'utf8');
  const key = `${VERSION}:${workload.length}:${[...workload].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, 0)}`;
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === key) return dir;
  for (const n of SIZES) {
    const { nextStep, ...history } = sessionHistory(n);
    const pass = eventPass({ ...history, nextStep }, passLength(n));
    fs.writeFileSync(path.join(dir, `events-${n}.json`), JSON.stringify({ n, history, pass, statelessEvents: statelessEvents(n) }));
  }
  const { messageCount, ...snapshot } = bootSnapshot();
  fs.writeFileSync(path.join(dir, 'snapshot.json'), JSON.stringify(snapshot));
  fs.writeFileSync(stamp, key);
  return dir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = generate(process.argv[2] ? path.resolve(process.argv[2]) : defaultDir);
  console.log(`bench data in ${path.relative(process.cwd(), dir) || '.'}`);
}
