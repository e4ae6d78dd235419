/**
 * Every `ts-reactor <command>` that README.md and the pages under docs/ name exists: each command
 * (in a code span or a fenced block, at the start of a command line) is one `ts-reactor --help`
 * lists and `ts-reactor <command> --help` accepts, and a subcommand after it (a bare word, as in
 * `ts-reactor executions cancel`) is on that command's usage line in `ts-reactor --help`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../src/cli/main.js';

const root = join(import.meta.dirname, '..', '..');

/** A command line a page names: where, the command and the bare word after it (if any). */
interface Mention {
  readonly where: string;
  readonly command: string;
  readonly sub: string | undefined;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? markdownFiles(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
  );
}

/** `ts-reactor <command> [<sub>]` at the start of a command line: after `$ `, `npx ` or `VAR=value ` prefixes. */
const COMMAND_LINE = /^(?:\$ )?(?:[A-Z_]+=\S+ )*(?:npx )?ts-reactor ([a-z][\w-]*)(?: ([a-z][\w-]*)(?=$|[\s|]))?/;

/** Every command line README.md and docs/**.md name, in fenced blocks and in code spans. */
export function mentions(): Mention[] {
  const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
  return files.flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const found: Mention[] = [];
    const add = (line: string, at: number): void => {
      const match = COMMAND_LINE.exec(line.trim());
      if (match)
        found.push({
          where: `${relative(root, file)}:${text.slice(0, at).split('\n').length}`,
          command: match[1]!,
          sub: match[2],
        });
    };
    const fences = /^```[^\n]*\n([\s\S]*?)^```$/gm;
    for (const block of text.matchAll(fences)) {
      let offset = block.index + block[0].indexOf('\n') + 1;
      for (const line of block[1]!.split('\n')) {
        add(line, offset);
        offset += line.length + 1;
      }
    }
    const prose = text.replace(fences, (block) => block.replace(/[^\n]/g, ' '));
    for (const span of prose.matchAll(/`([^`\n]+)`/g)) add(span[1]!, span.index);
    return found;
  });
}

async function run(args: readonly string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => out.push(l) });
  return { code, out: out.join('\n') };
}

describe('the commands the docs name', () => {
  const found = mentions();

  test('the pages name commands (the extraction finds them)', () => {
    const names = new Set(found.map((m) => `${m.command} ${m.sub ?? ''}`.trim()));
    expect([...names]).toEqual(expect.arrayContaining(['worker', 'executions list', 'executions show', 'locks']));
  });

  test('each command exists: ts-reactor <command> --help exits 0', async () => {
    const missing: string[] = [];
    for (const command of new Set(found.map((m) => m.command)))
      if ((await run([command, '--help'])).code !== 0)
        missing.push(`${command} (${found.find((m) => m.command === command)!.where})`);
    expect(missing).toEqual([]);
  });

  test("each subcommand is on its command's usage line in ts-reactor --help", async () => {
    const usage = (await run(['--help'])).out.split('\n').map((l) => l.trim());
    const listed = (command: string, sub: string): boolean =>
      usage.some((line) => {
        const words = line.split(/\s+/);
        return words[0] === command && words[1] !== undefined && words[1].split('|').includes(sub);
      });
    const missing = found
      .filter((m) => m.sub !== undefined && !listed(m.command, m.sub))
      .map((m) => `ts-reactor ${m.command} ${m.sub!} (${m.where})`);
    expect(missing).toEqual([]);
  });

  test('a command that does not exist is caught', async () => {
    expect((await run(['ops', '--help'])).code).toBe(2);
    expect(COMMAND_LINE.exec('ts-reactor ops')?.[1]).toBe('ops');
  });
});
