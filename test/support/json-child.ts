/**
 * A child process (a TypeScript file run with tsx) that reports on stdout as JSON lines; tests
 * wait for lines matching a predicate. Used by the multi-process tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** A spawned child and its JSON-line stdout. */
export interface JsonChild {
  readonly child: ChildProcess;
  readonly pid: number;
  /**
   * Resolves with the first stdout JSON line matching `accept` (seen before or after the call);
   * rejects after `timeoutMs` (default {@link CHILD_LINE_TIMEOUT_MS}) or when the child exits first.
   */
  line<T>(accept: (value: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<T>;
  /** Every JSON line seen so far that matches `accept`. */
  lines<T>(accept: (value: Record<string, unknown>) => boolean): T[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/**
 * How long {@link JsonChild.line} waits by default: three minutes. Starting a child under tsx
 * takes seconds on a quiet machine and may take a minute or more on a busy one; a line that is
 * due soon on a quiet machine is still waited for this long, so a test never fails for being slow.
 */
export const CHILD_LINE_TIMEOUT_MS = 180_000;

type Waiter = { accept: (v: Record<string, unknown>) => boolean; resolve: (v: unknown) => void };

/** Spawns `file` under tsx with one JSON argument; `children` tracks it until it exits (for cleanup). */
export function spawnJsonChild(file: string, arg: unknown, children: Set<ChildProcess>): JsonChild {
  const child = spawn(process.execPath, ['--import', 'tsx', file, JSON.stringify(arg)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  const seen: Record<string, unknown>[] = [];
  const waiters: Waiter[] = [];
  let err = '';
  let buffer = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!text.startsWith('{')) continue;
      const value = JSON.parse(text) as Record<string, unknown>;
      seen.push(value);
      for (const w of [...waiters]) {
        if (w.accept(value)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(value);
        }
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    pid: child.pid ?? -1,
    exited,
    stderr: () => err,
    lines: <T>(accept: (v: Record<string, unknown>) => boolean): T[] => seen.filter(accept) as T[],
    line: <T>(accept: (v: Record<string, unknown>) => boolean, timeoutMs = CHILD_LINE_TIMEOUT_MS): Promise<T> => {
      const found = seen.find(accept);
      if (found) return Promise.resolve(found as T);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `worker ${child.pid ?? '?'}: no line matching ${accept.toString()} within ${timeoutMs} ms; its last lines: ${seen
                  .slice(-8)
                  .map((v) => JSON.stringify(v))
                  .join(' ')}; stderr:\n${err}`,
              ),
            ),
          timeoutMs,
        );
        const waiter: Waiter = { accept, resolve: (v: unknown) => (clearTimeout(timer), resolve(v as T)) };
        waiters.push(waiter);
        void exited.then(({ code, signal }) => {
          if (!waiters.includes(waiter)) return;
          clearTimeout(timer);
          reject(
            new Error(
              `worker ${child.pid ?? '?'} exited (${code ?? signal}) before the expected line; stderr:\n${err}`,
            ),
          );
        });
      });
    },
  };
}
