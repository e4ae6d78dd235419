/**
 * The folder maps of `src/` stay true: every folder of more than a handful of `.ts` files has an
 * `ARCHITECTURE.md` (its own or an ancestor's) naming each of them, and no map names a `.ts` file
 * that is gone (`scripts/check-architecture-docs.mjs`). First the check itself on fixture trees
 * written to a temporary directory, then the real `src/`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import {
  architectureDocProblems,
  codeSpans,
  FILES_BEFORE_A_MAP,
  staleNames,
  unnamedFiles,
} from '../../scripts/check-architecture-docs.mjs';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** Writes `files` (path → text; a `.ts` file's text does not matter) to a new temporary directory. */
function fixture(files: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'architecture-docs-'));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

/** `n` `.ts` files `f1.ts` … in `folder`. */
function sources(folder: string, n: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${folder}f${i + 1}.ts`, 'export {};\n']));
}

/** A map naming `names` in backticks, one table row each. */
const map = (...names: string[]): string =>
  `# a folder\n\n| file | role |\n|---|---|\n${names.map((name) => `| \`${name}\` | one job |`).join('\n')}\n`;

describe('check-architecture-docs: the functions', () => {
  test('a folder of up to a handful of files needs no map; one more needs one', () => {
    expect(FILES_BEFORE_A_MAP).toBe(5);
    const root = fixture({ ...sources('small/', 5), ...sources('big/', 6), 'big/types.d.ts': 'export {};\n' });
    expect(unnamedFiles(root)).toEqual([
      { folder: 'big/', doc: undefined, count: 6, missing: ['f1.ts', 'f2.ts', 'f3.ts', 'f4.ts', 'f5.ts', 'f6.ts'] },
    ]);
  });

  test('files of subfolders do not count toward a folder: direct children only', () => {
    const root = fixture({ ...sources('a/', 3), ...sources('a/b/', 3) });
    expect(unnamedFiles(root)).toEqual([]);
  });

  test('a map names a file by its bare name or a path ending in it, never by a longer or shorter name', () => {
    const root = fixture({
      ...sources('a/', 6),
      'a/ARCHITECTURE.md': `${map('f1.ts', 'a/f2.ts', 'x/f3.ts', 'pf4.ts', 'f5')}\nAlso \`f6.ts\`.\n`,
    });
    expect(unnamedFiles(root)).toEqual([
      { folder: 'a/', doc: 'a/ARCHITECTURE.md', count: 6, missing: ['f4.ts', 'f5.ts'] },
    ]);
  });

  test("the nearest map counts: the folder's own, else its parent's, never a sibling's", () => {
    const root = fixture({
      ...sources('a/b/', 6),
      ...sources('a/c/', 6),
      'a/ARCHITECTURE.md': map(...[1, 2, 3, 4, 5, 6].map((i) => `b/f${i}.ts`)),
      'a/c/ARCHITECTURE.md': map('f1.ts'),
    });
    expect(unnamedFiles(root)).toEqual([
      { folder: 'a/c/', doc: 'a/c/ARCHITECTURE.md', count: 6, missing: ['f2.ts', 'f3.ts', 'f4.ts', 'f5.ts', 'f6.ts'] },
    ]);
  });

  test('a name inside a fenced block does not count', () => {
    expect(codeSpans('a `x.ts` b\n```\n`y.ts`\n```\n`z.ts` and `w`')).toEqual(['x.ts', 'z.ts', 'w']);
  });

  test('a map naming a file that is gone is reported, found under its folder at any depth', () => {
    const root = fixture({
      'a/one.ts': '',
      'a/deep/er/two.ts': '',
      'a/ARCHITECTURE.md': map('one.ts', 'two.ts', 'er/two.ts', 'gone.ts', 'deep/gone.ts', 'deep/one.ts'),
    });
    expect(staleNames(root)).toEqual([
      { doc: 'a/ARCHITECTURE.md', missing: ['deep/gone.ts', 'deep/one.ts', 'gone.ts'] },
    ]);
  });

  test("a neighbour's file may be named, and must exist; paths outside src/, tests and patterns are left alone", () => {
    const root = fixture({
      'a/one.ts': '',
      'ports/store.ts': '',
      'engine/model/events.ts': '',
      'a/ARCHITECTURE.md': `${map(
        'ports/store.ts',
        'store.ts',
        'model/events.ts',
        'ports/gone.ts',
        'lost.ts',
        '../b/x.ts',
        'src/x.ts',
        'test/x.ts',
        'docs/x.ts',
        'bench/x.ts',
        'scripts/x.ts',
        'x.test.ts',
        'x.d.ts',
        'ops*.ts',
      )}\nAnd \`a b.ts\`.\n`,
    });
    expect(staleNames(root)).toEqual([{ doc: 'a/ARCHITECTURE.md', missing: ['lost.ts', 'ports/gone.ts'] }]);
  });

  test('the messages name the document to fix and each missing file', () => {
    const root = fixture({
      ...sources('cli/', 6),
      ...sources('web/', 6),
      'web/ARCHITECTURE.md': map('f1.ts', 'f2.ts', 'f3.ts', 'f4.ts', 'old.ts'),
    });
    expect(architectureDocProblems(root, 'src/')).toEqual([
      'src/cli/ has 6 .ts files and no ARCHITECTURE.md in it or above it: write src/cli/ARCHITECTURE.md naming f1.ts, f2.ts, f3.ts, f4.ts, f5.ts, f6.ts',
      'src/web/ARCHITECTURE.md must name these files of src/web/: f5.ts, f6.ts',
      'src/web/ARCHITECTURE.md names files that do not exist: old.ts',
    ]);
  });
});

describe('the maps of src/', () => {
  test('every folder of more than a handful of files is mapped, every file named, every named file there', () => {
    expect(architectureDocProblems(SRC, 'src/')).toEqual([]);
  });
});
