import type * as TaskProjection from './task_projection.js';
import type * as TaskProjectionRules from './rules/task_projection.js';

/** Which build answered: the default wasm, the WebAssembly 1.0 (MVP) wasm, or pure JavaScript. */
export type Backend = 'wasm' | 'mvp' | 'js';

export interface LoadOptions {
  /** The backends allowed, tried in the built-in order (wasm, mvp, js). Default: all. */
  backends?: readonly Backend[];
  /** Called for each backend that failed before the one that loaded. */
  onFallback?: (backend: Backend, error: unknown) => void;
  /** Passed to the default wasm entry's `init()` (browsers; e.g. a URL of the `.wasm`). */
  wasm?: TaskProjection.InitInput | Promise<TaskProjection.InitInput>;
  /** Passed to the MVP entry's `init()` (browsers). */
  mvpWasm?: TaskProjection.InitInput | Promise<TaskProjection.InitInput>;
}

/** The store's API (the same names as `import * as tp from "task-projection"`), initialized. */
export type LoadedTaskProjection = Readonly<typeof TaskProjection> & {
  readonly backend: Backend;
  /** The backends tried before this one, with why they failed. */
  readonly failures: readonly { backend: Backend; error: unknown }[];
};

/**
 * Loads the fastest build this environment can run, initialized: the wasm, else (browsers) the
 * MVP wasm for WebViews without reference-types / multi-value, else the pure-JS build
 * (`task-projection/fallback`) where WebAssembly is missing or blocked. Rejects only when none
 * loads (the error's `failures` lists why).
 * @example
 * const tp = await loadTaskProjection();
 * const store = new tp.ProjectionStore();
 * console.log(tp.backend); // "wasm"
 */
export function loadTaskProjection(options?: LoadOptions): Promise<LoadedTaskProjection>;

/** The stateless rules' API (the same names as `import * as rules from "task-projection/rules"`), initialized. */
export type LoadedTaskProjectionRules = Readonly<typeof TaskProjectionRules> & {
  readonly backend: Backend;
  /** The backends tried before this one, with why they failed. */
  readonly failures: readonly { backend: Backend; error: unknown }[];
};

/**
 * `loadTaskProjection` for the stateless rule functions (`task-projection/rules`, their own wasm):
 * the same order of backends and the same options (`wasm` / `mvpWasm` are then the rules' `.wasm`
 * files).
 * @example
 * const rules = await loadTaskProjectionRules();
 * rules.normalizeStartPolicy(" new "); // "new"
 */
export function loadTaskProjectionRules(options?: LoadOptions): Promise<LoadedTaskProjectionRules>;
