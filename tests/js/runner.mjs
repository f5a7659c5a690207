// Scenario runner shared by the Node tests and the browser page (tests/js/browser/main.mjs).
// Implements docs/fixture-format.md. Plain ES module: no Node-only imports, no DOM use.
//
//   loadCases(json)                 validates the fixture file and returns its cases
//   runCase(api, testCase, assert)  calls api[testCase.call](...args) and checks the expectation;
//                                   throws on mismatch. `assert` is node:assert/strict in Node,
//                                   or the built-in strictAssert (same semantics) in browsers.

export const EXPECTATION_KEYS = ['expect', 'expect_message', 'expect_messages', 'error'];

const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `{"$undefined": true}` (exactly that key) stands for JS `undefined`. */
export function isUndefinedMarker(v) {
  return isPlainObject(v) && v.$undefined === true && Object.keys(v).length === 1;
}

/**
 * Turns a JSON fixture value into the JS value to pass or expect: markers become `undefined`
 * (as an argument, an array element, or a property that is present with the value undefined).
 * Returns fresh objects, so every run gets its own inputs.
 */
export function decode(v) {
  if (isUndefinedMarker(v)) return undefined;
  if (Array.isArray(v)) return v.map(decode);
  if (isPlainObject(v)) {
    const out = {};
    for (const k of Object.keys(v)) out[k] = decode(v[k]);
    return out;
  }
  return v;
}

/** Validates the fixture file's structure and returns its cases. */
export function loadCases(fixture) {
  if (!isPlainObject(fixture) || !Array.isArray(fixture.cases)) {
    throw new Error('scenario fixture: expected an object with a "cases" array');
  }
  const seen = new Set();
  fixture.cases.forEach((c, i) => {
    const where = `scenario fixture: cases[${i}]`;
    if (!isPlainObject(c)) throw new Error(`${where} is not an object`);
    if (typeof c.name !== 'string' || c.name === '') throw new Error(`${where}.name must be a non-empty string`);
    if (seen.has(c.name)) throw new Error(`${where}: duplicate name ${JSON.stringify(c.name)}`);
    seen.add(c.name);
    if (typeof c.call !== 'string') throw new Error(`${where} (${c.name}): "call" must be a string`);
    if (!Array.isArray(c.args)) throw new Error(`${where} (${c.name}): "args" must be an array`);
    const keys = EXPECTATION_KEYS.filter((k) => hasOwn(c, k));
    if (keys.length !== 1) {
      throw new Error(`${where} (${c.name}): needs exactly one of ${EXPECTATION_KEYS.join(', ')}; has ${keys.join(', ') || 'none'}`);
    }
  });
  return fixture.cases;
}

/** Short printable form of a value (undefined shown as such). */
export function show(v, depth = 0) {
  if (v === undefined) return 'undefined';
  if (typeof v === 'function') return `[function ${v.name}]`;
  if (typeof v === 'bigint') return `${v}n`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (depth > 4) return Array.isArray(v) ? '[…]' : '{…}';
  if (Array.isArray(v)) return `[${v.map((x) => show(x, depth + 1)).join(', ')}]`;
  if (v instanceof Error) return `${v.name}(${JSON.stringify(v.message)})`;
  const proto = Object.getPrototypeOf(v);
  const tag = proto === Object.prototype || proto === null ? '' : `${proto?.constructor?.name ?? '?'} `;
  return `${tag}{${Object.keys(v).map((k) => `${JSON.stringify(k)}: ${show(v[k], depth + 1)}`).join(', ')}}`;
}

class CaseAssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AssertionError';
  }
}

function deepStrictEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!hasOwn(b, k) || !deepStrictEqual(a[k], b[k])) return false;
  }
  return true;
}

/** The subset of node:assert/strict the runner uses, with the same semantics, for browsers. */
export const strictAssert = {
  ok(value, message) {
    if (!value) throw new CaseAssertionError(message ?? `expected a truthy value, got ${show(value)}`);
  },
  equal(actual, expected, message) {
    if (!Object.is(actual, expected)) {
      throw new CaseAssertionError(`${message ?? 'values differ'}\n  actual:   ${show(actual)}\n  expected: ${show(expected)}`);
    }
  },
  deepEqual(actual, expected, message) {
    if (!deepStrictEqual(actual, expected)) {
      throw new CaseAssertionError(`${message ?? 'values differ'}\n  actual:   ${show(actual)}\n  expected: ${show(expected)}`);
    }
  },
};

/** The element of `list` whose `id` is `id` (a fixture error when there is none). */
function elementById(list, id, c) {
  if (!Array.isArray(list)) throw new Error(`fixture ${c.name}: identity expectation needs args[0] to be an array`);
  const found = list.find((el) => isPlainObject(el) && el.id === id);
  if (!found) throw new Error(`fixture ${c.name}: args[0] has no element with id ${JSON.stringify(id)}`);
  return found;
}

const idsOf = (v) => (Array.isArray(v) ? show(v.map((x) => (isPlainObject(x) ? x.id : x))) : show(v));

/**
 * Runs one case against `api` (a module namespace of the package) and checks it.
 * Throws an assertion error when the engine's behaviour differs from the expectation.
 */
export function runCase(api, c, assert = strictAssert) {
  const fn = api[c.call];
  assert.equal(typeof fn, 'function', `the package exports no function ${c.call}`);
  const args = decode(c.args);

  let result;
  let thrown;
  let threw = false;
  try {
    result = fn(...args);
  } catch (err) {
    threw = true;
    thrown = err;
  }

  if (hasOwn(c, 'error')) {
    const want = c.error;
    assert.ok(threw, `${c.call} should throw {code: ${want.code}, field: ${want.field}} but returned ${show(result)}`);
    assert.ok(thrown instanceof Error, `${c.call} threw a non-Error: ${show(thrown)}`);
    assert.equal(thrown.code, want.code, `error code (message: ${JSON.stringify(thrown.message)})`);
    assert.equal(thrown.field, want.field, `error field (message: ${JSON.stringify(thrown.message)})`);
    assert.ok(
      typeof thrown.message === 'string' && thrown.message.includes(want.field),
      `error message ${JSON.stringify(thrown.message)} should name the field ${JSON.stringify(want.field)}`,
    );
    return;
  }

  if (threw) {
    const detail = thrown instanceof Error ? `${thrown.message} (code: ${show(thrown.code)}, field: ${show(thrown.field)})` : show(thrown);
    throw new CaseAssertionError(`${c.call} threw unexpectedly: ${detail}`);
  }

  if (hasOwn(c, 'expect')) {
    assert.deepEqual(result, decode(c.expect), `${c.call} result`);
  } else if (hasOwn(c, 'expect_message')) {
    if (c.expect_message === null) {
      assert.equal(result, null, `${c.call} should return null`);
    } else {
      const want = elementById(args[0], c.expect_message, c);
      assert.equal(result, want, `${c.call} should return the caller's own element with id ${JSON.stringify(c.expect_message)} (===); got ${idsOf([result])}`);
    }
  } else if (hasOwn(c, 'expect_messages')) {
    const want = c.expect_messages.map((id) => elementById(args[0], id, c));
    assert.ok(Array.isArray(result), `${c.call} should return an array, got ${show(result)}`);
    assert.deepEqual(result.map((x) => (isPlainObject(x) ? x.id : x)), c.expect_messages, `${c.call} ids`);
    want.forEach((el, i) => {
      assert.equal(result[i], el, `${c.call} result[${i}] should be the caller's own element with id ${JSON.stringify(c.expect_messages[i])} (===)`);
    });
  }
}

/** Runs every case and returns `[{ name, ok, message? }]` (for the browser page). */
export function runAll(api, cases, assert = strictAssert) {
  return cases.map((c) => {
    try {
      runCase(api, c, assert);
      return { name: c.name, ok: true };
    } catch (err) {
      return { name: c.name, ok: false, message: err instanceof Error ? err.message : show(err) };
    }
  });
}
