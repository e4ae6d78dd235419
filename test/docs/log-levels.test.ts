/**
 * The level table of docs/observability.md is `EVENT_LOG_LEVELS`: every event once, at its level.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { EVENT_LOG_LEVELS } from '../../src/index.js';

/** The event names of one row's cell; `.released` after `coordination.acquired` is `coordination.released`. */
function eventsIn(cell: string): string[] {
  const names: string[] = [];
  let family = '';
  for (const [, name] of cell.matchAll(/`([a-z_.]+)`/g)) {
    const full = name!.startsWith('.') ? `${family}${name}` : name!;
    family = full.slice(0, full.indexOf('.'));
    names.push(full);
  }
  return names;
}

test('docs/observability.md lists every event of EVENT_LOG_LEVELS once, at its level', () => {
  const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'observability.md'), 'utf8');
  const rows = text
    .split('\n')
    .filter((line) => /^\| `(error|warn|info|debug)` \|/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  const documented = rows.flatMap((cells) =>
    eventsIn(cells[2]!).map((event) => [event, cells[1]!.replaceAll('`', '')] as const),
  );
  expect(Object.fromEntries(documented)).toEqual({ ...EVENT_LOG_LEVELS });
  expect(documented).toHaveLength(Object.keys(EVENT_LOG_LEVELS).length);
});
