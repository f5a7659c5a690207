import type { NextConfig } from "next";

// What `create-next-app` 16.4.3 generates (`--ts --app`), so the fixture sees what a new app sees:
// `cacheComponents` on (dynamic `params` and request data must be read inside <Suspense>; the
// `dynamic` and `runtime` route segment configs are refused) and `partialPrefetching`. No wasm
// configuration on purpose: the package must work in a stock Next.js app.
//
// The two settings below are ours, not generated: they pin the project root to this folder. The
// fixture lives inside another npm project (the repository's package.json and package-lock.json),
// which Next would otherwise take as the workspace root: Turbopack would resolve and watch from
// there and the output file tracing would start outside the app.
const root = import.meta.dirname;

const nextConfig: NextConfig = {
  cacheComponents: true,
  partialPrefetching: true,
  outputFileTracingRoot: root,
  turbopack: { root },
};

export default nextConfig;
