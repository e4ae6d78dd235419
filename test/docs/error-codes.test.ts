/**
 * The error-code table of docs/dsl.md lists every code of `ErrorCode`, once each, and no other.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { ErrorCode } from '../../src/index.js';

test('docs/dsl.md lists exactly the codes of ErrorCode, each with an error and a meaning', () => {
  const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'dsl.md'), 'utf8');
  const section = text.slice(text.indexOf('### Error codes'));
  const rows = section
    .slice(0, section.search(/\n## /))
    .split('\n')
    .filter((line) => /^\| `[a-z_]+` \|/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  const documented = rows.map((cells) => cells[1]!.replaceAll('`', ''));
  expect([...documented].sort()).toEqual(Object.values(ErrorCode).sort());
  expect(new Set(documented).size).toBe(documented.length);
  for (const cells of rows) {
    expect(cells[2], cells[1]).toMatch(/^`[A-Za-z]+Error`$/);
    expect(cells[3]!.length, cells[1]).toBeGreaterThan(10);
  }
});
