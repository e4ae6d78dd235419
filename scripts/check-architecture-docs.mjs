/* global process, console -- a Node script */
/**
 * The rule that keeps the folder maps of `src/` true, checked by
 * `test/architecture/architecture-docs.test.ts`:
 *
 * 1. Every folder with more than {@link FILES_BEFORE_A_MAP} `.ts` files of its own (direct
 *    children) is described by the nearest `ARCHITECTURE.md`, in the folder or in an ancestor
 *    inside the root, and that document names each of those files in backticks: the bare name
 *    (`` `store.ts` ``) or a path ending in it (`` `run/store.ts` ``).
 * 2. Every `.ts` file a document names in backticks exists, under the document's folder (or, for
 *    a neighbour's file, elsewhere under the root), so a file deleted or renamed takes its line in
 *    the map with it.
 *
 * Rule 2 reads a name as a path relative to the document's folder, and a path ending in it will
 * do: `` `async/pending.ts` `` in `engine/` names `engine/model/async/pending.ts`. It leaves
 * alone what is not a file of `src/` named relative to a map: a name starting with `../` or `./`
 * or with a folder of the repository (`src/`, `test/`, `docs/`, `bench/`, `scripts/`), a test
 * (`*.test.ts`, they live in `test/`), a pattern (`*`, spaces). Maps also name a neighbour's
 * files: `` `ports/queue.ts` `` in `queue/`, `` `engine/run/hooks.ts` `` in `coordination/`, and
 * the engine's feature matrix has a column of bare port names (`` `store.ts` ``). So a name not
 * found under the document's folder may be found anywhere under the root instead, unless its
 * first folder is one of the document's own (then it is the document's file, and gone). The
 * price: a bare name of a deleted file goes unnoticed while another folder has a file of that
 * name (`index.ts`, `keys.ts`).
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** How many `.ts` files a folder may hold without a map; one more needs an `ARCHITECTURE.md`. */
export const FILES_BEFORE_A_MAP = 5;

const DOC = 'ARCHITECTURE.md';
const OUTSIDE = ['../', './', 'src/', 'test/', 'docs/', 'bench/', 'scripts/'];

/** `dir` relative to `root`, with `/` separators and a trailing `/` (`''` for the root). */
function rel(root, dir) {
  const path = relative(root, dir).split(sep).join('/');
  return path === '' ? '' : `${path}/`;
}

/** Every folder under `root` (itself first), as absolute paths, sorted. */
function folders(root) {
  const out = [root];
  for (const name of readdirSync(root).sort()) {
    const path = join(root, name);
    if (statSync(path).isDirectory()) out.push(...folders(path));
  }
  return out;
}

/** The `.ts` files directly in `dir` (not `.d.ts`), sorted. */
function ownSources(dir) {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts') && statSync(join(dir, name)).isFile())
    .sort();
}

/** Every `.ts` file under `dir`, as paths relative to `dir`. */
function allSources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...allSources(path).map((file) => `${name}/${file}`));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(name);
  }
  return out;
}

/** Every inline code span of a Markdown text, fenced blocks left out. */
export function codeSpans(markdown) {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  return [...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]);
}

/** Whether `spans` name `file`: the bare name, or a path ending in `/file`. */
const names = (spans, file) => spans.some((span) => span === file || span.endsWith(`/${file}`));

/** The nearest `ARCHITECTURE.md` of `dir`: in it, or in an ancestor up to `root`; undefined when none. */
function nearestDoc(root, dir) {
  for (let at = dir; ; at = join(at, '..')) {
    try {
      if (statSync(join(at, DOC)).isFile()) return join(at, DOC);
    } catch {
      // not here: look one folder up
    }
    if (relative(root, at) === '') return undefined;
  }
}

/**
 * Rule 1: each folder of `root` with more than {@link FILES_BEFORE_A_MAP} `.ts` files whose
 * nearest `ARCHITECTURE.md` is missing or leaves some of them unnamed. `folder` and `doc` are
 * relative to `root` (`doc` undefined when there is none), `missing` the unnamed files, sorted.
 */
export function unnamedFiles(root) {
  const out = [];
  for (const dir of folders(root)) {
    const files = ownSources(dir);
    if (files.length <= FILES_BEFORE_A_MAP) continue;
    const doc = nearestDoc(root, dir);
    const spans = doc === undefined ? [] : codeSpans(readFileSync(doc, 'utf8'));
    const missing = files.filter((file) => !names(spans, file));
    if (missing.length > 0) {
      const docPath = doc === undefined ? undefined : relative(root, doc).split(sep).join('/');
      out.push({ folder: rel(root, dir), doc: docPath, count: files.length, missing });
    }
  }
  return out;
}

/** Whether a code span is a `.ts` file of `src/` named relative to a map (see the module's comment). */
function checked(span) {
  if (!/^[\w.@-]+(\/[\w.@-]+)*\.ts$/.test(span)) return false;
  if (span.endsWith('.d.ts') || span.endsWith('.test.ts')) return false;
  return !OUTSIDE.some((prefix) => span.startsWith(prefix));
}

/** Whether one of `files` (paths relative to some folder) is `name` or ends in `/name`. */
const holds = (files, name) => files.some((file) => file === name || file.endsWith(`/${name}`));

/**
 * Rule 2: each `ARCHITECTURE.md` under `root` naming `.ts` files that are not there. `doc` is
 * relative to `root`, `missing` the names as written, sorted and deduplicated.
 */
export function staleNames(root) {
  const everywhere = allSources(root);
  const out = [];
  for (const dir of folders(root)) {
    const doc = join(dir, DOC);
    let text;
    try {
      text = readFileSync(doc, 'utf8');
    } catch {
      continue;
    }
    const own = allSources(dir);
    const subfolders = new Set(folders(dir).flatMap((sub) => rel(dir, sub).split('/').filter(Boolean)));
    const mine = (name) => name.includes('/') && subfolders.has(name.slice(0, name.indexOf('/')));
    const missing = [...new Set(codeSpans(text).filter(checked))].filter(
      (name) => !holds(own, name) && (mine(name) || !holds(everywhere, name)),
    );
    if (missing.length > 0) out.push({ doc: relative(root, doc).split(sep).join('/'), missing: missing.sort() });
  }
  return out;
}

/**
 * Both rules over `root`, one line per document to fix (or folder without one), its paths
 * relative to `root` behind `prefix` (`'src/'` reads well); `[]` when the maps are true.
 */
export function architectureDocProblems(root, prefix = '') {
  const lines = unnamedFiles(root).map(({ folder, doc, count, missing }) => {
    const where = `${prefix}${folder}` || './';
    return doc === undefined
      ? `${where} has ${count} .ts files and no ${DOC} in it or above it: write ${prefix}${folder}${DOC} naming ${missing.join(', ')}`
      : `${prefix}${doc} must name these files of ${where}: ${missing.join(', ')}`;
  });
  for (const { doc, missing } of staleNames(root))
    lines.push(`${prefix}${doc} names files that do not exist: ${missing.join(', ')}`);
  return lines;
}

function main() {
  const root = process.argv[2] ?? 'src';
  const problems = architectureDocProblems(root, `${root}/`);
  for (const line of problems) console.error(line);
  if (problems.length > 0) process.exit(1);
  console.log(`check-architecture-docs: every folder of ${root}/ with more than a handful of files is mapped`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
