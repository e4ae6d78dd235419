/**
 * Types of `check-architecture-docs.mjs` (plain JavaScript, like `check-imports.mjs`), for the
 * TypeScript that imports it: `test/architecture/architecture-docs.test.ts`.
 *
 * @module
 */

/** How many `.ts` files a folder may hold without a map; one more needs an `ARCHITECTURE.md`. */
export declare const FILES_BEFORE_A_MAP: number;

/** Every inline code span of a Markdown text, fenced blocks left out. */
export declare function codeSpans(markdown: string): string[];

/** A folder whose nearest `ARCHITECTURE.md` is missing or leaves some of its `.ts` files unnamed. */
export interface UnnamedFiles {
  /** The folder, relative to the root, with a trailing `/` (`''` for the root itself). */
  readonly folder: string;
  /** The nearest `ARCHITECTURE.md`, relative to the root; undefined when there is none. */
  readonly doc: string | undefined;
  /** How many `.ts` files the folder holds. */
  readonly count: number;
  /** The files the document does not name, sorted. */
  readonly missing: readonly string[];
}

/** An `ARCHITECTURE.md` naming `.ts` files that do not exist. */
export interface StaleNames {
  /** The document, relative to the root. */
  readonly doc: string;
  /** The names as the document writes them, sorted. */
  readonly missing: readonly string[];
}

/**
 * Rule 1: each folder of `root` with more than `FILES_BEFORE_A_MAP` `.ts` files whose nearest
 * `ARCHITECTURE.md` (in it or an ancestor up to `root`) is missing or does not name them all.
 */
export declare function unnamedFiles(root: string): UnnamedFiles[];

/**
 * Rule 2: each `ARCHITECTURE.md` under `root` naming `.ts` files that are not under its folder
 * (nor, for a neighbour's file, anywhere under `root`).
 */
export declare function staleNames(root: string): StaleNames[];

/**
 * Both rules over `root`, one line per document to fix (or folder without one), its paths
 * relative to `root` behind `prefix`; `[]` when the maps are true.
 */
export declare function architectureDocProblems(root: string, prefix?: string): string[];
