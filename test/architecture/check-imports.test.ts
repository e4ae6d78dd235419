/**
 * The import check itself (`scripts/check-imports.mjs`), on fixture trees written to a temporary
 * directory: what counts as an import, that a cycle (type-only included), an import up the
 * engine's layers, a folder outside the layers, a port importing past the ports and an adapter
 * importing the engine are reported, and the exit code and messages
 * of `node scripts/check-imports.mjs <root>`. The real `src/` is checked by `npm test` directly.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { cycles, ENGINE_LAYERS, importGraph, layerViolations, portViolations } from '../../scripts/check-imports.mjs';

const SCRIPT = fileURLToPath(new URL('../../scripts/check-imports.mjs', import.meta.url));

/** A tree without a cycle and with the engine's imports in layer order. */
const CLEAN: Readonly<Record<string, string>> = {
  'errors.ts': 'export class E extends Error {}\n',
  'dsl/index.ts': "export * from './a.js';\nexport type { B } from './b.js';\n",
  'dsl/a.ts':
    "import { E } from '../errors.js';\nimport { readFileSync } from 'node:fs';\nexport const a = [E, readFileSync];\n",
  'dsl/b.ts': "import type {\n  a,\n} from './a.js';\nexport type B = typeof a;\n",
  'ports/clock.ts': "import type { E } from '../errors.js';\nexport interface Clock { now(): number; fail?: E }\n",
  'ports/setup.ts': 'export {};\n',
  'storage/clock.ts': "import type { Clock } from '../ports/clock.js';\nexport const clock = (c: Clock) => c;\n",
  'engine/model/x.ts': "import type { Clock } from '../../ports/clock.js';\nexport type X = Clock;\n",
  'engine/jobs/y.ts':
    "import '../../ports/setup.js';\nimport type { Clock } from '../../ports/clock.js';\nexport type Y = Clock;\n",
  'engine/engine.ts':
    "import type { Y } from './jobs/y.js';\nimport { a } from '../dsl';\nexport type Engine = Y | typeof a;\n",
  'engine/index.ts': "export type { Engine } from './engine.js';\n",
};

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** Writes the clean tree with `changes` over it (a file's new text) to a new temporary directory. */
function fixture(changes: Readonly<Record<string, string>> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'check-imports-'));
  roots.push(root);
  for (const [file, text] of Object.entries({ ...CLEAN, ...changes })) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

/** Adds `line` at the top of a file of the clean tree. */
const prepend = (file: string, line: string): Record<string, string> => ({ [file]: `${line}\n${CLEAN[file]}` });

/** Runs the script as `npm test` does, with plain node. */
function run(root: string): { status: number | null; stdout: string; stderr: string } {
  const out = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

const CYCLE = {
  'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
  'b.ts': "import type { a } from './a.js';\nexport const b = 1;\nexport type A = typeof a;\n",
};
const UP_THE_LAYERS = prepend('engine/model/x.ts', "import type { Y } from '../jobs/y.js';");
const NOT_A_LAYER = {
  'engine/helpers/z.ts': "import type { Clock } from '../../ports/clock.js';\nexport type Z = Clock;\n",
};

describe('check-imports: the functions', () => {
  test('the graph has every relative import of a .ts file: type-only, export … from, side-effect, multi-line, a folder by its index.ts', () => {
    const graph = importGraph(fixture());
    expect(Object.fromEntries(graph)).toEqual({
      'dsl/a.ts': ['errors.ts'],
      'dsl/b.ts': ['dsl/a.ts'],
      'dsl/index.ts': ['dsl/a.ts', 'dsl/b.ts'],
      'engine/engine.ts': ['dsl/index.ts', 'engine/jobs/y.ts'],
      'engine/index.ts': ['engine/engine.ts'],
      'engine/jobs/y.ts': ['ports/clock.ts', 'ports/setup.ts'],
      'engine/model/x.ts': ['ports/clock.ts'],
      'errors.ts': [],
      'ports/clock.ts': ['errors.ts'],
      'ports/setup.ts': [],
      'storage/clock.ts': ['ports/clock.ts'],
    });
  });

  test('a clean tree has no cycle and no import against the layer order', () => {
    const graph = importGraph(fixture());
    expect(cycles(graph)).toEqual([]);
    expect(layerViolations(graph)).toEqual([]);
    expect(portViolations(graph)).toEqual([]);
  });

  test('a port importing anything but the ports and the error files is reported', () => {
    const graph = importGraph(fixture(prepend('ports/setup.ts', "import { a } from '../dsl/a.js';\nvoid a;")));
    expect(portViolations(graph)).toEqual(['ports/setup.ts -> dsl/a.ts']);
  });

  test('a port may import a file of the errors folder; an error file importing past the error files is reported', () => {
    const graph = importGraph(
      fixture({
        'errors/base.ts': 'export class B extends Error {}\n',
        'errors/x.ts': "import { B } from './base.js';\nimport { a } from '../dsl/a.js';\nexport const x = [B, a];\n",
        ...prepend('ports/setup.ts', "import type { B } from '../errors/base.js';\nexport type S = B;"),
      }),
    );
    expect(graph.get('ports/setup.ts')).toEqual(['errors/base.ts']);
    expect(portViolations(graph)).toEqual(['errors/x.ts -> dsl/a.ts']);
  });

  test('a storage or coordination file importing the engine is reported', () => {
    const graph = importGraph(
      fixture({
        ...prepend('storage/clock.ts', "import type { X } from '../engine/model/x.js';"),
        'coordination/p.ts': "import type { Engine } from '../engine/index.js';\nexport type P = Engine;\n",
      }),
    );
    expect(portViolations(graph)).toEqual([
      'coordination/p.ts -> engine/index.ts',
      'storage/clock.ts -> engine/model/x.ts',
    ]);
  });

  test('a cycle closed by a type-only import is reported, with its files', () => {
    const graph = importGraph(fixture(CYCLE));
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts']]);
    expect(layerViolations(graph)).toEqual([]);
  });

  test('a cycle closed by an inline import() type or a dynamic import is reported too', () => {
    const inlineType = {
      'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'b.ts': "export const b = 1;\nexport type A = typeof import('./a.js').a;\n",
    };
    expect(cycles(importGraph(fixture(inlineType)))).toEqual([['a.ts', 'b.ts']]);
    const dynamic = {
      'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'b.ts': "export const b = 1;\nexport const load = () => import('./a.js');\n",
    };
    expect(cycles(importGraph(fixture(dynamic)))).toEqual([['a.ts', 'b.ts']]);
  });

  test('every file of a longer cycle is reported, in one component', () => {
    const graph = importGraph(fixture(prepend('errors.ts', "import type { B } from './dsl/index.js';")));
    expect(cycles(graph)).toEqual([['dsl/a.ts', 'dsl/b.ts', 'dsl/index.ts', 'errors.ts']]);
  });

  test('an engine file importing a higher layer (model -> jobs) is reported', () => {
    const graph = importGraph(fixture(UP_THE_LAYERS));
    expect(cycles(graph)).toEqual([]);
    expect(layerViolations(graph)).toEqual(['engine/model/x.ts -> engine/jobs/y.ts']);
  });

  test('a layer importing the engine root files is reported; the root files import every layer', () => {
    const graph = importGraph(fixture(prepend('engine/jobs/y.ts', "import type { Engine } from '../index.js';")));
    expect(layerViolations(graph)).toEqual(['engine/jobs/y.ts -> engine/index.ts']);
  });

  test('a folder of the engine that is not a layer is reported', () => {
    const graph = importGraph(fixture(NOT_A_LAYER));
    expect(layerViolations(graph)).toEqual([`engine/helpers/z.ts: not in a layer (${ENGINE_LAYERS.join(' < ')})`]);
    expect(ENGINE_LAYERS).toEqual(['model', 'run', 'graph', 'execution', 'jobs', 'api']);
  });
});

describe('check-imports: node scripts/check-imports.mjs <root>', () => {
  test('exits 0 on a clean tree, with one summary line', () => {
    const out = run(fixture());
    expect(out.stderr).toBe('');
    expect(out.stdout).toBe(
      'check-imports: 11 files, no import cycle, ports < coordination and storage < engine, engine layers in order (model < run < graph < execution < jobs < api)\n',
    );
    expect(out.status).toBe(0);
  });

  test('exits 1 on a cycle, naming its files', () => {
    const root = fixture(CYCLE);
    const out = run(root);
    expect(out.stderr.split('\n')).toEqual([
      'import cycle (2 files): a.ts b.ts',
      `check-imports: 1 cycle(s), 0 import(s) against the layer order in ${root}/`,
      '',
    ]);
    expect(out.stdout).toBe('');
    expect(out.status).toBe(1);
  });

  test('exits 1 on an import against the layer order and on a folder outside the layers', () => {
    const root = fixture({ ...UP_THE_LAYERS, ...NOT_A_LAYER });
    const out = run(root);
    expect(out.stderr.split('\n')).toEqual([
      'import against the layer order: engine/helpers/z.ts: not in a layer (model < run < graph < execution < jobs < api)',
      'import against the layer order: engine/model/x.ts -> engine/jobs/y.ts',
      `check-imports: 0 cycle(s), 2 import(s) against the layer order in ${root}/`,
      '',
    ]);
    expect(out.status).toBe(1);
  });
});
