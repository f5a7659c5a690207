// The Vite dev server's configuration (vite.test.mjs starts `vite --config vite.dev.config.mjs`),
// as the package README's Vite section says: the dev server pre-bundles dependencies into
// node_modules/.vite, away from their `.wasm` files, so the package is excluded from it. `vite
// build` takes no configuration at all (vite.test.mjs builds with none).
export default {
  optimizeDeps: { exclude: ['task-projection'] },
};
