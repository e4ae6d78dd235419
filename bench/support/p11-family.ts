/**
 * Runs one in-process family of P11 in its own child process (`p11-child.ts`) and collects what
 * it reports. The whole family has a deadline: a child still running then is killed, and each
 * size without a reported outcome counts as stalled; a child that exits early (a crash, out of
 * memory) leaves its missing sizes as errors naming the exit.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import { spawnChildren, type ChildLine } from './children.js';
import type { P11ChildConfig, P11Failure, P11Outcome, P11Sample } from './p11-shared.js';

const CHILD = fileURLToPath(new URL('./p11-child.ts', import.meta.url));

/** Runs `config` in a child; resolves (never rejects) with its samples and failures. */
export async function runFamily(config: P11ChildConfig, deadlineMs: number): Promise<P11Outcome> {
  const samples: P11Sample[] = [];
  const failures: P11Failure[] = [];
  const started = Date.now();
  const missing = (kind: P11Failure['kind'], message: string): void => {
    for (const size of [config.small, config.large]) {
      if (failures.some((f) => f.size === size)) continue;
      const partial = samples.filter((s) => s.size === size).length;
      if (partial >= config.rounds) continue;
      failures.push({
        size,
        kind,
        message: `${message} (${partial} of ${config.rounds} rounds measured)`,
        afterMs: Date.now() - started,
      });
    }
  };
  let children;
  try {
    children = await spawnChildren(CHILD, [config]);
  } catch (error) {
    missing('error', `the measuring child did not start: ${error instanceof Error ? error.message : String(error)}`);
    return { samples, failures };
  }
  const child = children[0]!;
  const stop = child.listen((line: ChildLine) => {
    if (line.sample) samples.push(line.sample as P11Sample);
    else if (line.failure) failures.push(line.failure as P11Failure);
    else return false;
    return true;
  });
  try {
    child.send('go');
    await child.next((l) => l.done === true, deadlineMs);
  } catch (error) {
    const message = failures.some((f) => f.kind === 'stalled')
      ? 'not measured: the child stopped after a stalled run'
      : error instanceof Error
        ? error.message
        : String(error);
    missing(/no matching line/.test(message) ? 'stalled' : 'error', message.replace('no matching line', 'no end'));
  } finally {
    stop();
    await child.kill();
  }
  return { samples, failures };
}
