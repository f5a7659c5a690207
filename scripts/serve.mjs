#!/usr/bin/env node
// Static file server for the repo root: the demo (www/) loads the package from /pkg/, the browser
// tests load /tests/js/ and /tests/fixtures/. No dependencies; serves .wasm as application/wasm.
//
//   node scripts/serve.mjs            -> http://localhost:8080/www/   (PORT, HOST override)
//
// Also imported by tests/js/*.browser.test.mjs: startStaticServer({ port: 0 }) picks a free port.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Starts a static server. Resolves to { server, url, close(), requests } where `requests` logs
 * `{ method, path, status, type }` for every request (the browser tests assert on it).
 */
export function startStaticServer({ root = repoRoot, host = '127.0.0.1', port = 0, quiet = true } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const send = (status, body, type = 'text/plain; charset=utf-8', headers = {}) => {
      requests.push({ method: req.method, path: req.url, status, type });
      if (!quiet) console.log(`${status} ${req.method} ${req.url}`);
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      return send(400, 'bad request\n');
    }
    if (pathname === '/') return send(302, '', undefined, { location: '/www/' });
    let file = path.resolve(root, `.${pathname}`);
    if (file !== root && !file.startsWith(root + path.sep)) return send(403, 'forbidden\n');
    let stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat?.isDirectory()) {
      if (!pathname.endsWith('/')) return send(301, '', undefined, { location: `${pathname}/` });
      file = path.join(file, 'index.html');
      stat = fs.statSync(file, { throwIfNoEntry: false });
    }
    if (!stat?.isFile()) {
      const hint = pathname.startsWith('/pkg/') ? ' (run `npm run build` first)' : '';
      return send(404, `not found: ${pathname}${hint}\n`);
    }
    send(200, fs.readFileSync(file), MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      resolve({
        server,
        requests,
        url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${actual}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const port = Number(process.env.PORT ?? 8080);
  const host = process.env.HOST ?? '127.0.0.1';
  if (!fs.existsSync(path.join(repoRoot, 'pkg', 'task_projection.js'))) {
    console.warn('serve: pkg/ is not built yet: run `npm run build` (or `npm start`)');
  }
  const { url } = await startStaticServer({ host, port, quiet: process.env.QUIET === '1' });
  console.log(`serve: demo at ${url.replace('127.0.0.1', 'localhost')}/www/  (serving ${repoRoot}; Ctrl-C to stop)`);
}
