/**
 * Imports the `--module` of `ts-reactor worker`: an ES module, or a TypeScript one (`.ts`,
 * `.mts`, `.cts`) through `tsx` when it is installed. tsx's loader is registered once, only
 * for a TypeScript module and only when this process cannot load TypeScript already (it runs
 * from the compiled package, not from sources under a TypeScript loader).
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The file extensions loaded through tsx. */
export const TS_EXTENSIONS: readonly string[] = ['.ts', '.mts', '.cts'];

/** What to do when tsx is missing: install it, or start node with its loader. */
export const TSX_HINT = 'install tsx to load TypeScript modules (npm i -D tsx), or run the worker as node --import tsx';

/** A module that cannot be loaded: the message says why and what to do (exit 2). */
export class ModuleLoadError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'ModuleLoadError';
  }
}

/** How {@link importModule} reaches tsx and decides whether it is needed (tests replace them). */
export interface ModuleLoaderOptions {
  /** Imports tsx's programmatic API. Default `import('tsx/esm/api')`. */
  readonly loadTsx?: () => Promise<{ register: () => unknown }>;
  /** Whether this process already loads TypeScript. Default: this file is itself TypeScript. */
  readonly loadsTypeScript?: boolean;
}

let registered = false;

/** Imports the module at `path` (absolute) and returns its exports. @throws ModuleLoadError */
export async function importModule(
  path: string,
  options: ModuleLoaderOptions = {},
): Promise<Readonly<Record<string, unknown>>> {
  if (!existsSync(path)) throw new ModuleLoadError(`--module: no such file: ${path}`);
  const typescript = TS_EXTENSIONS.includes(extname(path).toLowerCase());
  const loadsTypeScript = options.loadsTypeScript ?? import.meta.url.endsWith('.ts');
  if (typescript && !loadsTypeScript && !registered) await registerTsx(path, options.loadTsx);
  try {
    return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_UNKNOWN_FILE_EXTENSION')
      throw new ModuleLoadError(`--module: ${path}: ${(error as Error).message}; ${TSX_HINT}`, error);
    throw new ModuleLoadError(
      `--module: could not load ${path}: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
}

async function registerTsx(path: string, loadTsx = defaultLoadTsx): Promise<void> {
  let api: { register: () => unknown };
  try {
    api = await loadTsx();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new ModuleLoadError(`--module: ${path} is TypeScript and tsx is not installed: ${TSX_HINT}`, error);
    throw error;
  }
  api.register();
  registered = true;
}

const defaultLoadTsx = (): Promise<{ register: () => unknown }> => import('tsx/esm/api');
