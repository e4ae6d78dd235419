/**
 * Child processes of a benchmark: spawned with `process.execPath <file> '<json>'` (the compiled
 * `.js` beside a `.ts` path when the benchmarks run compiled, as `npm run bench` does; through
 * `tsx` when they run from the TypeScript sources),
 * talked to with lines on stdin, answering with one JSON object per stdout line. Each child's
 * clock is mapped onto the parent's (`performance.timeOrigin + performance.now()`, offset
 * estimated by ping-pong), so timestamps taken in different processes can be compared.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

/** True when this module runs compiled (JavaScript built by `tsc`): its children run compiled too. */
const COMPILED = import.meta.url.endsWith('.js');

/** Wall-clock ms with sub-ms resolution, comparable across the processes of one machine. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** A line a child printed. */
export type ChildLine = Readonly<Record<string, unknown>>;

interface Waiter {
  readonly match: (line: ChildLine) => boolean;
  readonly resolve: (line: ChildLine) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** A running child process. */
export class BenchChild {
  readonly process: ChildProcess;
  /** child clock − parent clock, ms (see {@link BenchChild.syncClock}). */
  offset = 0;
  readonly #buffer: ChildLine[] = [];
  readonly #waiters = new Set<Waiter>();
  readonly #listeners = new Set<(line: ChildLine) => boolean>();
  #exited: Error | undefined;

  constructor(file: string, config: unknown) {
    const args = COMPILED ? [file.replace(/\.ts$/, '.js')] : ['--import', 'tsx', file];
    this.process = spawn(process.execPath, [...args, JSON.stringify(config)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.process.once('error', (error) => this.#fail(error));
    this.process.once('exit', (code, signal) =>
      this.#fail(new Error(`bench child ${file} exited (code ${String(code)}, signal ${String(signal)})`)),
    );
    this.process.stdin?.on('error', () => undefined);
    createInterface({ input: this.process.stdout! }).on('line', (text) => {
      let line: ChildLine;
      try {
        line = JSON.parse(text) as ChildLine;
      } catch {
        process.stderr.write(`[bench child] ${text}\n`);
        return;
      }
      for (const listener of this.#listeners) if (listener(line)) return;
      for (const waiter of this.#waiters) {
        if (waiter.match(line)) {
          this.#waiters.delete(waiter);
          clearTimeout(waiter.timer);
          waiter.resolve(line);
          return;
        }
      }
      this.#buffer.push(line);
    });
  }

  /** Sends one line on stdin. */
  send(line: string): void {
    if (this.#exited) throw this.#exited;
    this.process.stdin?.write(`${line}\n`);
  }

  /** The next line (buffered or future) that matches; rejects after `timeoutMs` or when the child exits. */
  next(match: (line: ChildLine) => boolean, timeoutMs = 30_000): Promise<ChildLine> {
    const index = this.#buffer.findIndex(match);
    if (index >= 0) return Promise.resolve(this.#buffer.splice(index, 1)[0]!);
    if (this.#exited) return Promise.reject(this.#exited);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(new Error(`bench child: no matching line within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.#waiters.add(waiter);
    });
  }

  /** Sees every line before the waiters; a listener that returns true consumes the line. Returns the unsubscribe function. */
  listen(listener: (line: ChildLine) => boolean): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Estimates the clock offset: a few pings, the one with the shortest round trip wins. */
  async syncClock(pings = 7): Promise<void> {
    let best = { rtt: Infinity, offset: 0 };
    for (let i = 0; i < pings; i++) {
      const sent = now();
      this.send(`ping ${i}`);
      const pong = await this.next((l) => l.pong === i);
      const received = now();
      const rtt = received - sent;
      if (rtt < best.rtt) best = { rtt, offset: (pong.t as number) - (sent + received) / 2 };
    }
    this.offset = best.offset;
  }

  /** A child timestamp on the parent's clock. */
  toParent(t: number): number {
    return t - this.offset;
  }

  /** SIGKILL (idempotent); resolves once the process is gone. */
  async kill(): Promise<void> {
    const proc = this.process;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  }

  #fail(error: Error): void {
    this.#exited ??= error;
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.#waiters.clear();
  }
}

/** Spawns `count` children and waits for each to print `{"ready":true}`; kills them all if one fails. */
export async function spawnChildren(
  file: string,
  configs: readonly unknown[],
  readyTimeoutMs = 60_000,
): Promise<BenchChild[]> {
  const children = configs.map((config) => new BenchChild(file, config));
  try {
    await Promise.all(children.map((c) => c.next((l) => l.ready === true, readyTimeoutMs)));
    for (const c of children) await c.syncClock();
    return children;
  } catch (error) {
    await Promise.all(children.map((c) => c.kill()));
    throw error;
  }
}

/** A critical section of exactly `ms` (timer for most of it, then a short spin), so timer slop does not count as overhead. */
export async function section(ms: number): Promise<void> {
  const end = performance.now() + ms;
  const coarse = ms - 1;
  if (coarse > 0) await new Promise((resolve) => setTimeout(resolve, coarse));
  while (performance.now() < end) {
    // spin out the last fraction of a millisecond
  }
}
