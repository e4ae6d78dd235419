/**
 * Types of `check-imports.mjs` (plain JavaScript, so `node scripts/check-imports.mjs` runs without
 * a build), for the TypeScript that imports it: `test/architecture/check-imports.test.ts`.
 *
 * @module
 */

/** The engine's layers, lowest first; a folder of `src/engine` not listed here is an error. */
export declare const ENGINE_LAYERS: readonly string[];

/**
 * The files of `root` and, for each, the files of `root` it imports (type-only included), as
 * paths relative to `root` with `/` separators, sorted.
 */
export declare function importGraph(root: string): Map<string, string[]>;

/** The strongly connected components with more than one file (Tarjan), each sorted. */
export declare function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][];

/**
 * The layer rank of an engine file (`engine/<layer>/…`), the root files above every layer; NaN
 * for a folder that is not a layer; undefined outside the engine.
 */
export declare function engineRank(file: string): number | undefined;

/**
 * Every import of an engine file against the layer order, as `from -> to` lines, and every
 * engine file outside a layer, as `file: not in a layer (…)`; sorted.
 */
export declare function layerViolations(graph: ReadonlyMap<string, readonly string[]>): string[];

/**
 * The shared error files, which the ports may import besides each other: files (`errors.ts`,
 * `error-codes.ts`) and folders, ending in `/` (`errors/`).
 */
export declare const PORT_IMPORTS: readonly string[];

/** True for a shared error file: one of {@link PORT_IMPORTS}, or a file in one of its folders. */
export declare function isErrorFile(file: string): boolean;

/** The folders below the engine (`coordination`, `storage`) that must not import it. */
export declare const BELOW_ENGINE: readonly string[];

/**
 * Every import of a port (`ports/…`) outside the ports and the shared error files, every import
 * of an error file outside the error files, and every import of the engine from `coordination/`
 * or `storage/`, as `from -> to` lines, sorted.
 */
export declare function portViolations(graph: ReadonlyMap<string, readonly string[]>): string[];
