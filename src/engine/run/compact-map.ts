/**
 * The element states of a large in-process map, kept apart from the execution's step records
 * (docs/limits.md, docs/decisions/076): one status character per element, the results in one
 * array, attempts and errors only where they say something. The run state routes the map's
 * element paths (`map[3]`) here, and the store keeps the persisted form apart from the record,
 * under its own size budget, so a map of 100,000 small elements does not fill the record.
 *
 * @module
 */
import type { MapFailure, MapResult } from '../../dsl/map-result.js';
import type { ErrorJSON } from '../../errors.js';
import type { ExecutionRecord, MapElementStates, StepRecord } from '../../ports/store.js';

/** Maps with more elements than this keep their element states apart from the record. */
export const COMPACT_MAP_ABOVE = 1_000;

type Status = StepRecord['status'];

/** One character per status (lower case; upper case when the element has no result). */
const CODES: Readonly<Record<Status, string>> = {
  running: 'n',
  retrying: 'r',
  completed: 'c',
  failed: 'f',
  skipped: 's',
  halted: 'h',
  compensated: 'p',
  undone: 'u',
  dispatched: 'd',
};
const STATUSES: Readonly<Record<string, Status>> = Object.fromEntries(
  Object.entries(CODES).flatMap(([status, code]) => [
    [code, status as Status],
    [code.toUpperCase(), status as Status],
  ]),
);
const UNREACHED = '-';

/** The states of one map's elements, by index. */
export class CompactMap {
  readonly size: number;
  readonly #codes: string[];
  readonly #results: unknown[];
  readonly #attempts = new Map<number, number>();
  readonly #errors = new Map<number, ErrorJSON>();
  #settled: { readonly failures: readonly MapFailure[]; readonly notStarted: readonly number[] } | undefined;
  /** The map's result as this process built it (never persisted: rebuilt from the elements). */
  #result: MapResult<unknown> | undefined;
  /** Bumped on every change: a store writes the persisted form again only when it moved. */
  #rev: number;
  #snapshot: MapElementStates | undefined;

  constructor(size: number, persisted?: MapElementStates) {
    this.size = size;
    this.#rev = persisted?.rev ?? 0;
    if (persisted === undefined || persisted.size !== size) {
      this.#codes = new Array<string>(size).fill(UNREACHED);
      this.#results = new Array<unknown>(size).fill(null);
      return;
    }
    this.#codes = [...persisted.status];
    this.#results = [...persisted.results];
    for (const [index, attempts] of Object.entries(persisted.attempts ?? {}))
      this.#attempts.set(Number(index), attempts);
    for (const [index, error] of Object.entries(persisted.errors ?? {})) this.#errors.set(Number(index), error);
    this.#settled = persisted.settled;
    this.#snapshot = persisted;
  }

  /** The element's state as a step record; `undefined` when it was never reached. */
  get(index: number): StepRecord | undefined {
    const code = this.#codes[index];
    if (code === undefined || code === UNREACHED) return undefined;
    const error = this.#errors.get(index);
    return {
      status: STATUSES[code]!,
      attempts: this.#attempts.get(index) ?? 1,
      ...(code === code.toUpperCase() ? {} : { result: this.#results[index] }),
      ...(error === undefined ? {} : { error }),
    };
  }

  /** Records the element's state; a state that is not a completion keeps what it does not replace (like the record's steps). */
  set(index: number, record: StepRecord): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.size)
      throw new RangeError(`map element ${index} is outside 0..${this.size - 1}`);
    const previous = record.status === 'completed' ? undefined : this.get(index);
    const merged: StepRecord = previous === undefined ? record : { ...previous, ...record };
    const code = CODES[merged.status];
    // Lower case: the element has a result (in the results array, `null` included); upper case: none.
    this.#codes[index] = merged.result === undefined ? code.toUpperCase() : code;
    this.#results[index] = merged.result === undefined ? null : merged.result;
    if (merged.attempts === 1) this.#attempts.delete(index);
    else this.#attempts.set(index, merged.attempts);
    if (merged.error === undefined) this.#errors.delete(index);
    else this.#errors.set(index, merged.error);
    this.#changed();
  }

  /** Notes the map's settled result (kept in memory; its failures and never-started elements persist). */
  settle(result: MapResult<unknown>): void {
    this.#result = result;
    this.#settled = { failures: result.failures, notStarted: result.notStarted };
    this.#changed();
  }

  /** The map's result: the one built in this process, or rebuilt from the element states. */
  result(): MapResult<unknown> | undefined {
    if (this.#result !== undefined || this.#settled === undefined) return this.#result;
    const values = new Array<unknown>(this.size).fill(undefined);
    const succeeded: { index: number; value: unknown }[] = [];
    for (let index = 0; index < this.size; index++) {
      const status = STATUSES[this.#codes[index]!];
      if (status !== 'completed' && status !== 'skipped') continue;
      const value = this.get(index)?.result;
      values[index] = value;
      succeeded.push({ index, value });
    }
    this.#result = {
      values,
      successes: succeeded.map((s) => s.value),
      succeeded,
      failures: this.#settled.failures,
      notStarted: this.#settled.notStarted,
    };
    return this.#result;
  }

  /** The persisted form (the same object until the next change). */
  snapshot(): MapElementStates {
    if (this.#snapshot !== undefined) return this.#snapshot;
    const sparse = <V>(entries: Map<number, V>): Record<string, V> | undefined =>
      entries.size === 0 ? undefined : Object.fromEntries([...entries].map(([k, v]) => [String(k), v]));
    const attempts = sparse(this.#attempts);
    const errors = sparse(this.#errors);
    this.#snapshot = {
      v: 1,
      rev: this.#rev,
      size: this.size,
      status: this.#codes.join(''),
      results: [...this.#results],
      ...(attempts === undefined ? {} : { attempts }),
      ...(errors === undefined ? {} : { errors }),
      ...(this.#settled === undefined ? {} : { settled: this.#settled }),
    };
    return this.#snapshot;
  }

  #changed(): void {
    this.#rev += 1;
    this.#snapshot = undefined;
  }
}

/** The map path and index of an element path (`orders.all[12]` → `orders.all`, 12), or undefined. */
export function elementOf(path: string): { readonly map: string; readonly index: number } | undefined {
  if (!path.endsWith(']')) return undefined;
  const open = path.lastIndexOf('[');
  if (open <= 0) return undefined;
  const index = Number(path.slice(open + 1, -1));
  return Number.isInteger(index) && index >= 0 ? { map: path.slice(0, open), index } : undefined;
}

/**
 * `record.steps` with each large map's result rebuilt from its element states (what a result
 * read from the record shows: the record keeps the map's result only once, in those states).
 */
export function stepsWithMapResults(record: ExecutionRecord): ExecutionRecord['steps'] {
  const states = record.mapStates;
  if (states === undefined) return record.steps;
  const steps = { ...record.steps };
  for (const [path, persisted] of Object.entries(states)) {
    const step = steps[path];
    if (step?.status !== 'completed' || step.result !== undefined) continue;
    const result = new CompactMap(persisted.size, persisted).result();
    if (result !== undefined) steps[path] = { ...step, result };
  }
  return steps;
}
