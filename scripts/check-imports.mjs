#!/usr/bin/env node
/* global process, console -- a Node script */
/**
 * The import rules of `src/` (see ARCHITECTURE.md), checked on every `npm test`:
 *
 * 1. No import cycle among the files of `src/`, type-only imports included.
 * 2. Inside `src/engine`, imports run down the layers only:
 *    model < run < graph < execution < jobs < api < the engine's root files
 *    (`engine.ts`, `index.ts`). A file may import its own layer or a lower one.
 * 3. The ports (`src/ports`, the contracts between the engine and its backends) import only each
 *    other and the shared error files (`errors.ts`, `errors/…`, `error-codes.ts`); the error files
 *    import only each other; the coordination policy and the storage adapters (`src/coordination`,
 *    `src/storage`) never import the engine.
 *
 * Usage: `node scripts/check-imports.mjs [root]` (default `src`). Prints each violation and
 * exits 1 when there is any; prints one summary line and exits 0 otherwise.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

/** The engine's layers, lowest first; a folder of `src/engine` not listed here is an error. */
export const ENGINE_LAYERS = ['model', 'run', 'graph', 'execution', 'jobs', 'api'];

// Static imports and re-exports, bare side-effect imports, and `import('./x.js')` (a dynamic import, or a type written inline).
const SPECIFIER =
  /^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm;

/** Every `.ts` file under `dir`, as paths relative to `base`. */
function sources(dir, base) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path, base));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(relative(base, path).split(sep).join('/'));
  }
  return out;
}

/** The files of `root` and, for each, the files of `root` it imports (type-only included). */
export function importGraph(root) {
  const files = sources(root, root);
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const targets = new Set();
    for (const match of text.matchAll(SPECIFIER)) {
      const spec = match[1] ?? match[2] ?? match[3];
      const target = normalize(join(dirname(file), spec))
        .split(sep)
        .join('/')
        .replace(/\.js$/, '.ts');
      if (known.has(target)) targets.add(target);
      else if (known.has(`${target}/index.ts`)) targets.add(`${target}/index.ts`);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The strongly connected components with more than one file (Tarjan), each sorted. */
export function cycles(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const meta = new Map();
  const found = [];
  const visit = (v) => {
    meta.set(v, { index, low: index });
    index += 1;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!meta.has(w)) {
        visit(w);
        meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low);
      } else if (on.has(w)) meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index);
    }
    if (meta.get(v).low !== meta.get(v).index) return;
    const component = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!meta.has(v)) visit(v);
  return found;
}

/** The layer rank of an engine file (`engine/<layer>/…`), the root files above every layer; undefined outside the engine. */
export function engineRank(file) {
  const parts = file.split('/');
  if (parts[0] !== 'engine') return undefined;
  if (parts.length === 2) return ENGINE_LAYERS.length;
  const rank = ENGINE_LAYERS.indexOf(parts[1]);
  return rank < 0 ? Number.NaN : rank;
}

/** Every import of an engine file against the layer order, as "from -> to" lines. */
export function layerViolations(graph) {
  const out = [];
  for (const [from, targets] of graph) {
    const rank = engineRank(from);
    if (rank === undefined) continue;
    if (Number.isNaN(rank)) out.push(`${from}: not in a layer (${ENGINE_LAYERS.join(' < ')})`);
    for (const to of targets) {
      const target = engineRank(to);
      if (target !== undefined && !Number.isNaN(target) && target > rank) out.push(`${from} -> ${to}`);
    }
  }
  return out.sort();
}

/** The shared error files, which the ports may import besides each other: files, and folders (ending in `/`). */
export const PORT_IMPORTS = ['errors.ts', 'errors/', 'error-codes.ts'];

/** True for a shared error file (one of {@link PORT_IMPORTS}, or a file in one of its folders). */
export function isErrorFile(file) {
  return PORT_IMPORTS.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry));
}

/** The folders below the engine that must not import it. */
export const BELOW_ENGINE = ['coordination', 'storage'];

/**
 * Every import of a port outside the ports and the error files, every import of an error file
 * outside the error files, and every import of the engine from below it.
 */
export function portViolations(graph) {
  const out = [];
  for (const [from, targets] of graph) {
    const top = from.split('/')[0];
    for (const to of targets) {
      if (top === 'ports' && !to.startsWith('ports/') && !isErrorFile(to)) out.push(`${from} -> ${to}`);
      if (isErrorFile(from) && !isErrorFile(to)) out.push(`${from} -> ${to}`);
      if (BELOW_ENGINE.includes(top) && to.startsWith('engine/')) out.push(`${from} -> ${to}`);
    }
  }
  return out.sort();
}

function main() {
  const root = process.argv[2] ?? 'src';
  const graph = importGraph(root);
  const found = cycles(graph);
  const against = [...layerViolations(graph), ...portViolations(graph)];
  for (const component of found) console.error(`import cycle (${component.length} files): ${component.join(' ')}`);
  for (const line of against) console.error(`import against the layer order: ${line}`);
  if (found.length > 0 || against.length > 0) {
    console.error(
      `check-imports: ${found.length} cycle(s), ${against.length} import(s) against the layer order in ${root}/`,
    );
    process.exit(1);
  }
  console.log(
    `check-imports: ${graph.size} files, no import cycle, ports < coordination and storage < engine, engine layers in order (${ENGINE_LAYERS.join(' < ')})`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main();
