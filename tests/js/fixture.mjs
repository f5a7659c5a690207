// Loads tests/fixtures/scenarios.json for the Node-side tests.
import { readFileSync } from 'node:fs';
import { loadCases } from './runner.mjs';

export const fixtureUrl = new URL('../fixtures/scenarios.json', import.meta.url);

export function readCases() {
  return loadCases(JSON.parse(readFileSync(fixtureUrl, 'utf8')));
}
