/**
 * Calling an app module's `close()` (what it opened itself: its own connections, timers) when a
 * command that loaded it is done, bounded: a `close()` that never settles does not keep the
 * process, and one that throws is reported, not rethrown.
 *
 * @module
 */
import type { WorkerModule } from './worker-module.js';

/** How long a module's `close()` may take before the command goes on without it, ms. */
export const MODULE_CLOSE_TIMEOUT_MS = 10_000;

/** What became of a module's `close()`. */
export type ModuleCloseOutcome =
  | { readonly kind: 'none' }
  | { readonly kind: 'closed' }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'timed_out'; readonly timeoutMs: number };

/** Calls `module.close()` when it has one and waits for it at most `timeoutMs`. Never throws. */
export async function closeModule(
  module: Pick<WorkerModule, 'close'> | undefined,
  timeoutMs: number = MODULE_CLOSE_TIMEOUT_MS,
): Promise<ModuleCloseOutcome> {
  const close = module?.close;
  if (close === undefined) return { kind: 'none' };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ModuleCloseOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timed_out', timeoutMs }), timeoutMs);
    timer.unref();
  });
  const settled = (async (): Promise<ModuleCloseOutcome> => {
    try {
      await close();
      return { kind: 'closed' };
    } catch (error) {
      return { kind: 'failed', message: error instanceof Error ? error.message : String(error) };
    }
  })();
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

const WARNINGS: {
  readonly [K in ModuleCloseOutcome['kind']]: (o: Extract<ModuleCloseOutcome, { kind: K }>) => string | undefined;
} = {
  none: () => undefined,
  closed: () => undefined,
  failed: (o) => `the module's close() threw: ${o.message}`,
  timed_out: (o) => `the module's close() did not settle within ${o.timeoutMs} ms; going on without it`,
};

/** The warning line an outcome deserves (without the command's name), or undefined when it went well. */
export function closeWarning(outcome: ModuleCloseOutcome): string | undefined {
  return (WARNINGS[outcome.kind] as (o: ModuleCloseOutcome) => string | undefined)(outcome);
}
