/**
 * The bars of an execution's timeline, built from its trace: per step its attempts, retry
 * backoffs, sleeps, interrupt pauses and its undo or compensation; for the execution its parks
 * (waiting on a key, an async unit or a map), inline waits on a key, and its rollback.
 *
 * @module
 */
import type { ReactorEvent } from '../../engine/model/events.js';

/** What a bar stands for. */
export type BarKind =
  'attempt' | 'failed' | 'backoff' | 'sleep' | 'pause' | 'park' | 'wait' | 'rollback' | 'undo' | 'compensate';

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

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.halted', 'run.cancelled']);

/** Builds the timeline of `trace`; `now` ends the bars still open (an execution not finished). */
export function timelineOf(trace: readonly ReactorEvent[], now: number): Timeline | undefined {
  const first = trace[0];
  if (first === undefined) return undefined;
  const finished = trace.some((e) => TERMINAL.has(e.type));
  const last = trace[trace.length - 1]?.at ?? first.at;
  const to = finished ? last : Math.max(last, now);
  const lanes = new Map<string, Bar[]>([['', []]]);
  const open = new Map<string, { kind: BarKind; start: number; label: string; lane: string }>();
  const push = (lane: string, bar: Bar): void => {
    const bars = lanes.get(lane) ?? [];
    bars.push(bar);
    lanes.set(lane, bars);
  };
  const begin = (id: string, lane: string, kind: BarKind, start: number, label: string): void => {
    if (!lanes.has(lane)) lanes.set(lane, []);
    open.set(id, { kind, start, label, lane });
  };
  const close = (id: string, end: number, kind?: BarKind, suffix = ''): void => {
    const bar = open.get(id);
    if (!bar) return;
    open.delete(id);
    push(bar.lane, { kind: kind ?? bar.kind, start: bar.start, end, open: false, label: `${bar.label}${suffix}` });
  };
  for (const e of trace) visit(e, { begin, close, push, to });
  for (const bar of open.values())
    push(bar.lane, { kind: bar.kind, start: bar.start, end: to, open: true, label: bar.label });
  return {
    lanes: [...lanes.entries()].filter(([, bars]) => bars.length > 0).map(([lane, bars]) => ({ lane, bars })),
    from: first.at,
    to: Math.max(to, first.at + 1),
  };
}

interface Builder {
  begin(id: string, lane: string, kind: BarKind, start: number, label: string): void;
  close(id: string, end: number, kind?: BarKind, suffix?: string): void;
  push(lane: string, bar: Bar): void;
  readonly to: number;
}

type Handlers = {
  readonly [T in ReactorEvent['type']]?: (e: Extract<ReactorEvent, { readonly type: T }>, b: Builder) => void;
};

const ended = (e: ReactorEvent, b: Builder): void => {
  b.close('park', e.at, 'park', ', ended');
  b.close('rollback', e.at, 'rollback', `, ${e.type.slice(4)}`);
};
const waited = (e: ReactorEvent & { readonly key: string }, b: Builder): void => b.close(`wait:${e.key}`, e.at, 'wait');

/** What each event does to the bars; events not listed draw nothing. */
const HANDLERS: Handlers = {
  'step.started': (e, b) => b.begin(`attempt:${e.step}`, e.step, 'attempt', e.at, `attempt ${e.attempt}`),
  'step.succeeded': (e, b) => b.close(`attempt:${e.step}`, e.at, 'attempt', ' succeeded'),
  'step.failed': (e, b) => b.close(`attempt:${e.step}`, e.at, 'failed', `: ${e.error.message}`),
  'step.retrying': (e, b) => {
    b.close(`attempt:${e.step}`, e.at, 'failed', `: ${e.error.message}`);
    b.push(e.step, {
      kind: 'backoff',
      start: e.at,
      end: Math.min(e.at + e.delayMs, Math.max(b.to, e.at)),
      open: false,
      label: `retry backoff ${e.delayMs} ms`,
    });
  },
  'step.sleeping': (e, b) =>
    b.begin(`sleep:${e.step}`, e.step, 'sleep', e.at, `sleeping until ${new Date(e.wakeAt).toISOString()}`),
  'step.woke': (e, b) => b.close(`sleep:${e.step}`, e.at, 'sleep', e.early ? ', woken early' : ', woke'),
  'interrupt.paused': (e, b) =>
    b.begin(
      `pause:${e.step}`,
      e.step,
      'pause',
      e.at,
      `paused at interrupt${e.correlationId ? ` (${e.correlationId})` : ''}`,
    ),
  'interrupt.resumed': (e, b) => b.close(`pause:${e.step}`, e.at, 'pause', ', resumed'),
  'interrupt.timed_out': (e, b) => b.close(`pause:${e.step}`, e.at, 'pause', ', timed out'),
  'run.parked': (e, b) =>
    b.begin(
      'park',
      '',
      'park',
      e.at,
      `parked on ${e.primitive} ${e.key}${e.step ? ` at step ${e.step}` : ''}${e.repeats ? `, parked again ${e.repeats}× behind the same holder` : ''}`,
    ),
  'async.parked': (e, b) => b.begin('park', '', 'park', e.at, `parked at step ${e.step} (async unit)`),
  'map.parked': (e, b) => b.begin('park', '', 'park', e.at, `parked at step ${e.step} (map)`),
  'run.woken': (e, b) => b.close('park', e.at, 'park', ', woken'),
  'coordination.waiting': (e, b) =>
    b.begin(`wait:${e.key}`, e.step ?? '', 'wait', e.at, `waiting for ${e.primitive} ${e.key}`),
  'coordination.acquired': waited,
  'coordination.contended': waited,
  'coordination.denied': waited,
  'run.rolling_back': (e, b) =>
    b.begin('rollback', '', 'rollback', e.at, `rollback${e.step ? ` after step ${e.step}` : ''}`),
  'step.undone': (e, b) => b.push(e.step, { kind: 'undo', start: e.at, end: e.at, open: false, label: 'undone' }),
  'step.compensated': (e, b) =>
    b.push(e.step, { kind: 'compensate', start: e.at, end: e.at, open: false, label: 'compensated' }),
  'run.completed': ended,
  'run.failed': ended,
  'run.halted': ended,
  'run.cancelled': ended,
};

function visit(e: ReactorEvent, b: Builder): void {
  const handler = HANDLERS[e.type] as ((event: ReactorEvent, builder: Builder) => void) | undefined;
  handler?.(e, b);
}
