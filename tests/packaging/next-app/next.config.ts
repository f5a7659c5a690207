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

// The consumer README's "Reaching the API server", as written there: the browser's /api/v1 (REST
// and the WebSocket's upgrade) goes to the API server at TASKS_API_ORIGIN (read by `next build`;
// next.test.mjs builds with the reference server's address and checks this rule is the README's).
const api = process.env.TASKS_API_ORIGIN ?? "http://localhost:8080";

const nextConfig: NextConfig = {
  cacheComponents: true,
  partialPrefetching: true,
  async rewrites() {
    return [{ source: "/api/v1/:path*", destination: `${api}/api/v1/:path*` }];
  },
  outputFileTracingRoot: root,
  turbopack: { root },
};

export default nextConfig;
