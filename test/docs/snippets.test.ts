/**
 * Every ```ts block in README.md and docs/**.md must compile against the real API. Each block
 * is type-checked as its own module, with `ts-reactor`, `ts-reactor/testing` and
 * `ts-reactor/testing/vitest` mapped to the sources and a small prelude declaring the fake
 * services the examples talk to (`psp`, `stock`, `mailer`). A block fenced as ```ts nocheck is
 * skipped (for fragments that are deliberately wrong or incomplete); a block fenced as
 * ```ts file=name.ts can be imported by later blocks as './name.js'.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

const PRELUDE = `
declare global {
  const psp: {
    charge(account: string, amountCents: number, currency?: string): Promise<{ id: string; amountCents: number }>;
    refund(chargeId: string): Promise<void>;
  };
  const stock: {
    reserve(sku: string, quantity: number): Promise<{ reservationId: string; total: number }>;
    release(reservationId: string): Promise<void>;
  };
  const mailer: { send(to: string, text: string): Promise<{ messageId: string }> };
}
export {};
`;

interface Snippet {
  /** Module name other blocks import it by (```ts file=checkout.ts), if any. */
  readonly file: string | undefined;
  readonly source: string;
  readonly line: number;
  readonly code: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? markdownFiles(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
  );
}

function snippets(): Snippet[] {
  const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
  return files.flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const found: Snippet[] = [];
    for (const match of text.matchAll(/^```ts[ \t]*(\S*)\n([\s\S]*?)^```$/gm)) {
      if (match[1] === 'nocheck') continue;
      const line = text.slice(0, match.index).split('\n').length + 1;
      const name = match[1]?.startsWith('file=') ? match[1].slice('file='.length) : undefined;
      found.push({ file: name, source: relative(root, file), line, code: match[2]! });
    }
    return found;
  });
}

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return {
    ...parsed.options,
    noEmit: true,
    noUnusedLocals: false,
    baseUrl: root,
    paths: {
      'ts-reactor': ['./src/index.ts'],
      'ts-reactor/testing': ['./src/testing/index.ts'],
      'ts-reactor/redis': ['./src/storage/redis/index.ts'],
      'ts-reactor/testing/vitest': ['./src/testing/vitest.ts'],
      'ts-reactor/bullmq': ['./src/bullmq.ts'],
      'ts-reactor/postgres': ['./src/postgres.ts'],
      'ts-reactor/otel': ['./src/otel/index.ts'],
      'ts-reactor/metrics': ['./src/metrics/index.ts'],
      'ts-reactor/web': ['./src/web/index.ts'],
    },
  };
}

/** Type-checks the blocks; `isolated` checks each block before the library sources, as a consumer's compiler does. */
function diagnose(blocks: readonly Snippet[], order: 'library-first' | 'isolated'): string[] {
  const virtual = new Map<string, string>([[join(root, 'docs', '__snippets__', 'prelude.ts'), PRELUDE]]);
  const origin = new Map<string, Snippet>();
  blocks.forEach((snippet, i) => {
    const name = join(root, 'docs', '__snippets__', snippet.file ?? `snippet-${i}.ts`);
    if (virtual.has(name)) throw new Error(`${snippet.source}:${snippet.line}: a block named ${snippet.file} exists already`);
    virtual.set(name, snippet.code);
    origin.set(name, snippet);
  });
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile, directoryExists } = host;
  const snippetDir = join(root, 'docs', '__snippets__');
  host.directoryExists = (dir) => dir === snippetDir || (directoryExists?.call(host, dir) ?? true);
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const text = virtual.get(name);
    return text === undefined ? getSourceFile.call(host, name, language, ...rest) : ts.createSourceFile(name, text, language, true);
  };
  const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });
  const diagnostics =
    order === 'library-first' ? ts.getPreEmitDiagnostics(program) : [...origin.keys()].flatMap((name) => ts.getPreEmitDiagnostics(program, program.getSourceFile(name)));
  const problems: string[] = [];
  for (const d of diagnostics) {
    const snippet = d.file ? origin.get(d.file.fileName) : undefined;
    if (!snippet || !d.file || d.start === undefined) continue;
    const at = d.file.getLineAndCharacterOfPosition(d.start).line;
    problems.push(`${snippet.source}:${snippet.line + at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  }
  return problems;
}

test('every TypeScript block in the docs compiles against the real API', () => {
  const blocks = snippets();
  expect(blocks.length).toBeGreaterThan(10);
  expect(diagnose(blocks, 'library-first')).toEqual([]);
}, 240_000); // a whole-program compile: minutes on a loaded 2-core machine

// Checked before the library's own sources (what a consumer of the published .d.ts gets): a
// regression test for the variance of AnyReactorDefinition.
test('the README example compiles in isolation, as in a consumer project', () => {
  const readme = snippets().filter((s) => s.source === 'README.md');
  expect(diagnose(readme, 'isolated')).toEqual([]);
}, 240_000); // a whole-program compile: minutes on a loaded 2-core machine
