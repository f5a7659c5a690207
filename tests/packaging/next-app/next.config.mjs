// No wasm configuration on purpose: the package must work in a stock Next.js app. The only
// settings pin the project root to this folder, because the fixture lives inside another npm
// project (the repository's own lockfile would otherwise be taken as the workspace root).
const root = import.meta.dirname;

/** @type {import('next').NextConfig} */
export default {
  outputFileTracingRoot: root,
  turbopack: { root },
};
