/**
 * Each error class registers its own revival beside its declaration (`src/errors/*.ts`, and
 * `ScriptError` in the Redis adapter): loading the package's main entry is enough for every code
 * of the error-code table of docs/dsl.md to come back from JSON as the class the table names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import * as entry from '../../src/index.js';

const { errorFromJSON, ReactorError } = entry;

/** The `code | error` pairs of the table. */
function documented(): [code: string, error: string][] {
  const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'dsl.md'), 'utf8');
  const section = text.slice(text.indexOf('### Error codes'));
  return section
    .slice(0, section.search(/\n## /))
    .split('\n')
    .filter((line) => /^\| `[a-z_]+` \|/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim().replaceAll('`', '')))
    .map((cells) => [cells[1]!, cells[2]!]);
}

/** The error classes the main entry exports, by name. */
function exportedClasses(): Map<string, abstract new (...args: never[]) => unknown> {
  const out = new Map<string, abstract new (...args: never[]) => unknown>();
  for (const [name, value] of Object.entries(entry))
    if (typeof value === 'function' && (value === ReactorError || value.prototype instanceof ReactorError))
      out.set(name, value as abstract new (...args: never[]) => unknown);
  return out;
}

test.each(documented())('%s comes back from JSON as a %s, from the main entry alone', (code, error) => {
  const type = exportedClasses().get(error);
  expect(type, `${error} is exported by the main entry`).toBeDefined();
  const back = errorFromJSON({ name: error, code, message: 'from another process', details: { step: 's' } });
  expect(back).toBeInstanceOf(type!);
  expect(back).toMatchObject({ name: error, code, message: 'from another process', details: { step: 's' } });
});

test('every error class the main entry exports is named in the table', () => {
  const named = new Set(documented().map(([, error]) => error));
  expect([...exportedClasses().keys()].filter((name) => !named.has(name))).toEqual([]);
});
