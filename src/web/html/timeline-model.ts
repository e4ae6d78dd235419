/**
 * The bars of an execution's timeline, built from its trace: per step its attempts, retry
 * backoffs, sleeps, interrupt pauses and its undo or compensation; for the execution its queue
 * time (queued until a worker took it), its parks (waiting on a key, an async unit or a map),
 * inline waits on a key, and its rollback.
 *
 * The rules that keep the bars where the trace says (docs/decisions/109):
 * - a park ends at the job that resumes the execution (`run.resumed`), whether a release woke it
 *   (`run.woken` follows) or its own delayed job came due (a fallback, a rate limit's
 *   retry-after);
 * - a sleep or an interrupt pause cuts its step's attempt in two: the attempt is drawn up to the
 *   sleep and from the wake on (a part of no length is not drawn), never under it;
 * - the axis covers this execution's own activity: an entry that only links to another execution
 *   (`run.retried`, written when an operator retries it) does not stretch it.
 *
 * @module
 */
import type { ReactorEvent } from '../../engine/model/events.js';
import { duration } from './format.js';
import { isoTime } from '../../ops/time.js';

/** What a bar stands for. */
export type BarKind =
  | 'queued'
  | 'attempt'
  | 'failed'
  | 'backoff'
  | 'sleep'
  | 'pause'
  | 'park'
  | 'wait'
  | 'rollback'
  | 'undo'
  | 'compensate';

/** One bar: from `start` to `end` (engine clock ms); `open` when it had not ended at `end`. */
export interface Bar {
  readonly kind: BarKind;
  readonly start: number;
  readonly end: number;
  readonly open: boolean;
  readonly label: string;
}

/** One row: the execution's own (`lane: ''`) or a step's. */
export interface Lane {
  readonly lane: string;
  readonly bars: readonly Bar[];
}

/** The timeline: its rows and the span of time it covers. */
export interface Timeline {
  readonly lanes: readonly Lane[];
  readonly from: number;
  readonly to: number;
}

const TERMINAL = new Set<ReactorEvent['type']>(['run.completed', 'run.failed', 'run.halted', 'run.cancelled']);

/** Entries about another execution: they are in the trace, not on this execution's axis. */
const LINKS = new Set<ReactorEvent['type']>(['run.retried']);

/** The job reasons after which the execution waits for a worker (a delayed start waits for its time first). */
const QUEUE_LABELS: Readonly<Record<string, (delayMs: number) => string>> = {
  start: (delayMs) => (delayMs > 0 ? `queued (start delayed ${duration(delayMs)})` : 'queued'),
  resume: () => 'queued after the resume',
  busy: () => 'queued after the resume (its key was busy)',
};

/** Builds the timeline of `trace`; `now` ends the bars still open (an execution not finished). */
export function timelineOf(trace: readonly ReactorEvent[], now: number): Timeline | undefined {
  const first = trace[0];
  if (first === undefined) return undefined;
  const own = trace.filter((e) => !LINKS.has(e.type));
  const finished = own.some((e) => TERMINAL.has(e.type));
  const last = own[own.length - 1]?.at ?? first.at;
  const to = finished ? last : Math.max(last, now);
  const bars = new Bars(to, new Set(own.flatMap((e) => (e.type === 'run.woken' ? [e.jobId] : []))));
  for (const e of own) visit(e, bars);
  return { lanes: bars.lanes(), from: first.at, to: Math.max(to, first.at + 1) };
}

interface OpenBar {
  readonly kind: BarKind;
  readonly start: number;
  readonly label: string;
  readonly lane: string;
  /** A part of an attempt next to a sleep or a pause: not drawn when it has no length. */
  readonly dropEmpty: boolean;
}

/** The bars being built: those still open by id, those done by lane. */
class Bars {
  readonly #open = new Map<string, OpenBar>();
  readonly #done = new Map<string, Bar[]>([['', []]]);
  /** The attempt each step is in, for the part drawn after a sleep or a pause. */
  readonly attempts = new Map<string, number>();

  /** The end of the axis (open bars end there). */
  readonly to: number;
  /** The jobs a release woke (`run.woken`): a park they end was woken. */
  readonly wokenJobs: ReadonlySet<string>;

  constructor(to: number, wokenJobs: ReadonlySet<string>) {
    this.to = to;
    this.wokenJobs = wokenJobs;
  }

  /** Opens bar `id`; one still open under that id ends here first (`replaced` names why). */
  begin(id: string, bar: Omit<OpenBar, 'dropEmpty'> & { readonly dropEmpty?: boolean }, replaced = ''): void {
    this.close(id, bar.start, undefined, replaced);
    if (!this.#done.has(bar.lane)) this.#done.set(bar.lane, []);
    this.#open.set(id, { ...bar, dropEmpty: bar.dropEmpty ?? false });
  }

  /**
   * Ends bar `id` at `end`, as `kind` when given, its label extended by `suffix`; a bar of no
   * length is dropped when it was opened so, or when `dropEmpty`. False when none was open.
   */
  close(id: string, end: number, kind?: BarKind, suffix = '', dropEmpty = false): boolean {
    const bar = this.#open.get(id);
    if (!bar) return false;
    this.#open.delete(id);
    if ((bar.dropEmpty || dropEmpty) && end <= bar.start) return true;
    this.push(bar.lane, { kind: kind ?? bar.kind, start: bar.start, end, open: false, label: `${bar.label}${suffix}` });
    return true;
  }

  push(lane: string, bar: Bar): void {
    const list = this.#done.get(lane) ?? [];
    list.push(bar);
    this.#done.set(lane, list);
  }

  /** The lanes with at least one bar; bars still open run to the end of the axis. */
  lanes(): Lane[] {
    for (const bar of this.#open.values())
      this.push(bar.lane, { kind: bar.kind, start: bar.start, end: this.to, open: true, label: bar.label });
    this.#open.clear();
    return [...this.#done.entries()].filter(([, bars]) => bars.length > 0).map(([lane, bars]) => ({ lane, bars }));
  }
}

type Handlers = {
  readonly [T in ReactorEvent['type']]?: (e: Extract<ReactorEvent, { readonly type: T }>, b: Bars) => void;
};

const ended = (e: ReactorEvent, b: Bars): void => {
  b.close('queue', e.at);
  b.close('park', e.at, 'park', ', ended');
  b.close('rollback', e.at, 'rollback', `, ${e.type.slice(4)}`);
};
const waited = (e: ReactorEvent & { readonly key: string }, b: Bars): void =>
  void b.close(`wait:${e.key}`, e.at, 'wait');

/** A sleep or a pause begins: the step's attempt is drawn up to here. */
function suspend(b: Bars, step: string, at: number, kind: 'sleep' | 'pause', label: string): void {
  b.close(`attempt:${step}`, at, 'attempt', kind === 'sleep' ? ', then sleeps' : ', then pauses', true);
  b.begin(`${kind}:${step}`, { kind, lane: step, start: at, label });
}

/** A sleep or a pause ends: the step's attempt goes on from here. */
function proceed(b: Bars, step: string, at: number, kind: 'sleep' | 'pause', suffix: string): void {
  if (!b.close(`${kind}:${step}`, at, kind, suffix)) return;
  const attempt = b.attempts.get(step) ?? 1;
  const after = kind === 'sleep' ? 'after the sleep' : 'after the pause';
  b.begin(`attempt:${step}`, {
    kind: 'attempt',
    lane: step,
    start: at,
    label: `attempt ${attempt}, ${after}`,
    dropEmpty: true,
  });
}

/** A park: it ends at the job that resumes the execution. */
function park(b: Bars, e: ReactorEvent, label: string): void {
  b.begin('park', { kind: 'park', lane: '', start: e.at, label }, ', parked again');
}

/** What each event does to the bars; events not listed draw nothing. */
const HANDLERS: Handlers = {
  'run.queued': (e, b) => {
    const label = QUEUE_LABELS[e.reason];
    if (label) b.begin('queue', { kind: 'queued', lane: '', start: e.at, label: label(e.delayMs) });
  },
  'run.resumed': (e, b) => {
    b.close('queue', e.at, 'queued', ', until a worker took it');
    b.close('park', e.at, 'park', b.wokenJobs.has(e.jobId) ? ', woken by a release' : ', resumed by its own job');
  },
  'run.woken': (e, b) => void b.close('park', e.at, 'park', ', woken by a release'),
  'step.started': (e, b) => {
    b.attempts.set(e.step, e.attempt);
    b.begin(
      `attempt:${e.step}`,
      { kind: 'attempt', lane: e.step, start: e.at, label: `attempt ${e.attempt}` },
      ', no outcome recorded',
    );
  },
  'step.succeeded': (e, b) => void b.close(`attempt:${e.step}`, e.at, 'attempt', ' succeeded'),
  'step.failed': (e, b) => void b.close(`attempt:${e.step}`, e.at, 'failed', `: ${e.error.message}`),
  'step.retrying': (e, b) => {
    b.close(`attempt:${e.step}`, e.at, 'failed', `: ${e.error.message}`);
    b.push(e.step, {
      kind: 'backoff',
      start: e.at,
      end: Math.min(e.at + e.delayMs, Math.max(b.to, e.at)),
      open: false,
      label: `retry backoff ${duration(e.delayMs)}`,
    });
  },
  'step.sleeping': (e, b) => suspend(b, e.step, e.at, 'sleep', `sleeping until ${isoTime(e.wakeAt)}`),
  'step.woke': (e, b) => proceed(b, e.step, e.at, 'sleep', e.early ? ', woken early' : ', woke'),
  'interrupt.paused': (e, b) =>
    suspend(b, e.step, e.at, 'pause', `paused at interrupt${e.correlationId ? ` (${e.correlationId})` : ''}`),
  'interrupt.resumed': (e, b) => proceed(b, e.step, e.at, 'pause', ', resumed'),
  'interrupt.timed_out': (e, b) => proceed(b, e.step, e.at, 'pause', ', timed out'),
  'wait.paused': (e, b) => suspend(b, e.step, e.at, 'pause', `waiting for event ${e.event}`),
  'wait.resumed': (e, b) => proceed(b, e.step, e.at, 'pause', `, resumed by event ${e.eventId}`),
  'wait.timed_out': (e, b) => proceed(b, e.step, e.at, 'pause', ', timed out'),
  'run.parked': (e, b) =>
    park(
      b,
      e,
      `parked on ${e.primitive} ${e.key}${e.step ? ` at step ${e.step}` : ''}${e.repeats ? `, parked again ${e.repeats}× behind the same holder` : ''}`,
    ),
  'async.parked': (e, b) => park(b, e, `parked at step ${e.step} (async unit)`),
  'map.parked': (e, b) => park(b, e, `parked at step ${e.step} (map)`),
  'coordination.waiting': (e, b) =>
    b.begin(`wait:${e.key}`, {
      kind: 'wait',
      lane: e.step ?? '',
      start: e.at,
      label: `waiting for ${e.primitive} ${e.key}`,
    }),
  'coordination.acquired': waited,
  'coordination.contended': waited,
  'coordination.denied': waited,
  'run.rolling_back': (e, b) =>
    b.begin('rollback', {
      kind: 'rollback',
      lane: '',
      start: e.at,
      label: `rollback${e.step ? ` after step ${e.step}` : ''}`,
    }),
  'step.undone': (e, b) => b.push(e.step, { kind: 'undo', start: e.at, end: e.at, open: false, label: 'undone' }),
  'step.compensated': (e, b) =>
    b.push(e.step, { kind: 'compensate', start: e.at, end: e.at, open: false, label: 'compensated' }),
  'run.completed': ended,
  'run.failed': ended,
  'run.halted': ended,
  'run.cancelled': ended,
};

function visit(e: ReactorEvent, b: Bars): void {
  const handler = HANDLERS[e.type] as ((event: ReactorEvent, bars: Bars) => void) | undefined;
  handler?.(e, b);
}
