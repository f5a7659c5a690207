// Used by the fallback step (scripts/build/fallback.mjs).
import { fail } from './common.mjs';

// Minimal reader of a wasm binary's type, import, function and export sections: which imports and
// exports take or return i64 (wasm2js splits each into two i32 halves, low first).
export function wasmSignatures(bytes) {
  let pos = 8;
  const u32 = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[pos++];
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) return result;
    }
  };
  const name = () => {
    const n = u32();
    const s = bytes.subarray(pos, pos + n).toString('utf8');
    pos += n;
    return s;
  };
  const valtype = () => ({ 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x6f: 'externref', 0x70: 'funcref' })[bytes[pos++]] ?? '?';
  const types = [];
  const funcImports = [];
  const funcTypes = [];
  const exports = [];
  while (pos < bytes.length) {
    const id = bytes[pos++];
    const size = u32();
    const end = pos + size;
    if (id === 1) {
      for (let i = 0, n = u32(); i < n; i++) {
        if (bytes[pos++] !== 0x60) fail('wasm type section: unexpected type form');
        const params = [];
        for (let j = 0, m = u32(); j < m; j++) params.push(valtype());
        const results = [];
        for (let j = 0, m = u32(); j < m; j++) results.push(valtype());
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let i = 0, n = u32(); i < n; i++) {
        const module = name();
        const field = name();
        const kind = bytes[pos++];
        if (kind === 0) funcImports.push({ module, field, type: types[u32()] });
        else if (kind === 1) { pos++; const flags = u32(); u32(); if (flags & 1) u32(); }
        else if (kind === 2) { const flags = u32(); u32(); if (flags & 1) u32(); }
        else if (kind === 3) pos += 2;
        else fail(`wasm import section: unknown kind ${kind}`);
      }
    } else if (id === 3) {
      for (let i = 0, n = u32(); i < n; i++) funcTypes.push(types[u32()]);
    } else if (id === 7) {
      for (let i = 0, n = u32(); i < n; i++) {
        const field = name();
        const kind = bytes[pos++];
        const index = u32();
        if (kind === 0) exports.push({ field, type: index < funcImports.length ? funcImports[index].type : funcTypes[index - funcImports.length] });
      }
    }
    pos = end;
  }
  const wide = (t) => t.params.includes('i64') || t.results.includes('i64');
  return { i64Imports: funcImports.filter((f) => wide(f.type)), i64Exports: exports.filter((f) => wide(f.type)) };
}
