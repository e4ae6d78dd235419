/**
 * The step book of one execution in this process: its step records (with their attempt logs and
 * start marks), the element states of its large maps, and the completion sequence. Its only
 * writer is the {@link RunState} that owns it; the checkpointer reads it to build each record.
 *
 * @module
 */
import type { AttemptRun, ExecutionRecord, MapElementStates, StepRecord } from '../../ports/store.js';
import { CompactMap, elementOf } from './compact-map.js';

/** How the book names this process on the attempts it runs, and whether it marks starts. */
export interface StepBookInit {
  /** A persisted record to resume from: its steps, map states and completion sequence. */
  readonly resume?: ExecutionRecord | undefined;
  /** Results are counted towards the unsaved bytes (a checkpoint interval is set, or durable mode in a worker: a last step may wait for the final record). */
  readonly countsBytes: boolean;
}

/** Step records, large maps' element states and the completion sequence of one execution. */
export class StepBook {
  readonly #steps: Record<string, StepRecord>;
  /** Large in-process maps: their element states, apart from the step records (docs/decisions/076). */
  readonly #maps = new Map<string, CompactMap>();
  readonly #countsBytes: boolean;
  #seq = 0;
  #unsavedBytes = 0;
  /** Starts already carried by the checkpoint before them (`path#attempt`): their attempt needs no write of its own. */
  #carried: Set<string> | undefined;

  constructor(init: StepBookInit) {
    this.#countsBytes = init.countsBytes;
    this.#steps = { ...(init.resume?.steps ?? {}) };
    for (const [path, states] of Object.entries(init.resume?.mapStates ?? {}))
      this.#maps.set(path, new CompactMap(states.size, states));
    this.#seq = Math.max(0, ...Object.values(this.#steps).map((r) => r.completedSeq ?? 0));
  }

  /** An estimate of the result bytes recorded since the last checkpoint (infinite once a large map settled). */
  get unsavedBytes(): number {
    return this.#unsavedBytes;
  }

  /** A checkpoint wrote everything recorded so far. */
  saved(): void {
    this.#unsavedBytes = 0;
  }

  /** The recorded state of one step (from this run or the record it resumed). */
  stepRecord(path: string): StepRecord | undefined {
    const element = this.#maps.size === 0 ? undefined : elementOf(path);
    const map = element && this.#maps.get(element.map);
    if (map && element) return map.get(element.index);
    const record = this.#steps[path];
    return record && this.#withMapResult(path, record);
  }

  /** See {@link RunState.compactMap}. */
  compactMap(path: string, size: number): void {
    if (this.#maps.get(path)?.size !== size) this.#maps.set(path, new CompactMap(size));
  }

  /** A compact map's own record with its result (rebuilt from the element states when it settled in another process). */
  #withMapResult(path: string, record: StepRecord): StepRecord {
    const map = this.#maps.get(path);
    if (map === undefined || record.status !== 'completed' || record.result !== undefined) return record;
    const result = map.result();
    return result === undefined ? record : { ...record, result };
  }

  /** True when the book holds any step at or under `path` (a compose or map reached before). */
  reached(path: string): boolean {
    if (this.#maps.has(path)) return true;
    return Object.keys(this.#steps).some((p) => p === path || p.startsWith(`${path}.`) || p.startsWith(`${path}[`));
  }

  /** A snapshot of every step's state (a compact map's with its result). */
  get steps(): Readonly<Record<string, StepRecord>> {
    const steps = { ...this.#steps };
    for (const path of this.#maps.keys()) {
      const record = steps[path];
      if (record) steps[path] = this.#withMapResult(path, record);
    }
    return steps;
  }

  /** The step records as a record stores them (a compact map's without its result). */
  records(): Record<string, StepRecord> {
    return { ...this.#steps };
  }

  /** The element states of the large maps, by path; undefined when there is none. */
  mapStates(): Record<string, MapElementStates> | undefined {
    if (this.#maps.size === 0) return undefined;
    return Object.fromEntries([...this.#maps].map(([path, map]) => [path, map.snapshot()]));
  }

  /** See {@link RunState.setStep}. */
  setStep(step: string, record: Omit<StepRecord, 'completedSeq'>): void {
    if (this.#maps.size > 0 && this.#compactSet(step, record)) return;
    const prev = this.#steps[step];
    let next: StepRecord =
      record.status === 'completed'
        ? { ...record, completedSeq: ++this.#seq }
        : prev === undefined
          ? record
          : { ...prev, ...record };
    if (next.runs === undefined && prev?.runs !== undefined) next = { ...next, runs: prev.runs };
    if (next.started !== undefined && record.status !== 'running') {
      const { started: _started, ...rest } = next;
      next = rest;
    }
    this.#steps[step] = next;
    if (record.result !== undefined && this.#countsBytes) this.#unsavedBytes += approximateBytes(record.result);
  }

  /** See {@link RunState.logAttempt}. */
  logAttempt(step: string, runs: readonly AttemptRun[]): void {
    const prev = this.#steps[step];
    if (prev === undefined || this.inCompactMap(step)) return;
    this.#steps[step] = { ...prev, runs: prev.runs === undefined ? runs : [...prev.runs, ...runs] };
  }

  /** Marks the start of `attempt` of `step` (durable mode); `carried`: the next checkpoint carries it. */
  markStart(step: string, attempt: number, worker: string, at: number, carried: boolean): void {
    this.setStep(step, { status: 'running', attempts: attempt, started: { attempt, worker, at } });
    if (carried) (this.#carried ??= new Set()).add(`${step}#${attempt}`);
  }

  /** True (once) when the checkpoint before this attempt's start carried it already. */
  takeCarried(step: string, attempt: number): boolean {
    return this.#carried?.delete(`${step}#${attempt}`) === true;
  }

  /** An element of a large in-process map: its states are kept apart and carry no start marks. */
  inCompactMap(step: string): boolean {
    if (this.#maps.size === 0) return false;
    const element = elementOf(step);
    return element !== undefined && this.#maps.has(element.map);
  }

  /** A compact map's element, or its own record (kept without the result, which its elements hold); false for any other step. */
  #compactSet(step: string, record: Omit<StepRecord, 'completedSeq'>): boolean {
    const element = elementOf(step);
    const elements = element && this.#maps.get(element.map);
    if (elements && element) {
      elements.set(element.index, record);
      return true;
    }
    const map = this.#maps.get(step);
    if (map === undefined || record.result === undefined) return false;
    const { result, ...rest } = record;
    if (record.status === 'completed') map.settle(result as Parameters<CompactMap['settle']>[0]);
    this.#unsavedBytes = Number.POSITIVE_INFINITY; // a settled large map is written at once (its states may be refused)
    this.#steps[step] =
      record.status === 'completed' ? { ...rest, completedSeq: ++this.#seq } : { ...this.#steps[step], ...rest };
    return true;
  }
}

/** A cheap upper-ish estimate of a value's JSON size (strings and small values exactly, objects by stringifying). */
function approximateBytes(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value !== 'object' || value === null) return 16;
  try {
    return JSON.stringify(value).length;
  } catch {
    return 0;
  }
}
