/**
 * Step views and the step graph of an execution, rebuilt from its record, its trace and (when
 * known) its reactor definition.
 *
 * @module
 */
import type { AnyReactorDefinition, GraphNode, NodeKind } from '../dsl/definition.js';
import type { ReactorEvent } from '../engine/model/events.js';
import type { AttemptRun, ExecutionRecord, StepRecord } from '../ports/store.js';
import type { AttemptView, GraphNodeView, GraphSource, GraphView, SleepView, StepView } from './types.js';

/** Each step of the record with its attempts from the trace, in completion order, then the rest. */
export function stepViews(record: ExecutionRecord): StepView[] {
  const trace = record.trace ?? [];
  const order = (r: StepRecord): number => r.completedSeq ?? Number.MAX_SAFE_INTEGER;
  const rolled = rolledBack(trace);
  return Object.entries(record.steps)
    .sort(([, a], [, b]) => order(a) - order(b))
    .map(([path, stepRecord]) => {
      const back = rolled.get(path);
      const sleep = sleepView(trace, path, stepRecord);
      return {
        path,
        record: stepRecord,
        attempts: attemptsOf(trace, path, stepRecord.runs),
        ...(back === undefined ? {} : { rolledBack: back }),
        ...(sleep === undefined ? {} : { sleep }),
      };
    });
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * A sleep step's times as dates: one whose record keeps a wake time (it sleeps), or whose result
 * is a sleep's (`{ wakeAt, wokeAt, early }`) where the trace says it slept or nothing else is known.
 */
function sleepView(trace: readonly ReactorEvent[], path: string, record: StepRecord): SleepView | undefined {
  if (record.status === 'running' && record.wakeAt !== undefined && Number.isFinite(record.wakeAt))
    return { wakeAt: iso(record.wakeAt) };
  const result = record.result;
  if (typeof result !== 'object' || result === null) return undefined;
  const { wakeAt, wokeAt, early, ...rest } = result as Record<string, unknown>;
  if (typeof wakeAt !== 'number' || typeof wokeAt !== 'number' || typeof early !== 'boolean') return undefined;
  if (Object.keys(rest).length > 0 || !Number.isFinite(wakeAt) || !Number.isFinite(wokeAt)) return undefined;
  const slept = trace.some((e) => (e.type === 'step.sleeping' || e.type === 'step.woke') && e.step === path);
  const otherKind = trace.some((e) => e.type === 'step.started' && e.step === path);
  if (!slept && otherKind) return undefined; // a step of its own that returned that shape
  return { wakeAt: iso(wakeAt), wokeAt: iso(wokeAt), early };
}

/**
 * The attempts of the step at `path`: from its attempt log (`runs`: each attempt with its worker
 * and outcome, a lost worker's included) with the errors and backoffs its `step.*` events add; a
 * record written before attempts were logged gets them from the events alone.
 */
export function attemptsOf(
  trace: readonly ReactorEvent[],
  path: string,
  runs: readonly AttemptRun[] = [],
): AttemptView[] {
  const attempts = new Map<number, AttemptView>();
  const put = (attempt: number, patch: Partial<AttemptView>): void => {
    attempts.set(attempt, { attempt, outcome: 'running', ...attempts.get(attempt), ...patch });
  };
  if (runs.length > 0) {
    for (const run of runs)
      put(run.attempt, {
        outcome: run.outcome,
        ...(run.worker === undefined ? {} : { worker: run.worker }),
        ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
        ...(run.endedAt === undefined ? {} : { endedAt: run.endedAt }),
      });
    for (const event of trace) {
      if (!('step' in event) || event.step !== path) continue;
      // `step.retrying` names the attempt that comes next: the one before it failed and is retried.
      if (event.type === 'step.retrying' && attempts.has(event.attempt - 1))
        put(event.attempt - 1, { outcome: 'retrying', error: event.error, delayMs: event.delayMs, endedAt: event.at });
      else if (event.type === 'step.failed' && attempts.has(event.attempt))
        put(event.attempt, { error: event.error, endedAt: event.at });
      else if (event.type === 'step.started')
        put(event.attempt, { startedAt: event.at }); // logged or running now
      else if (event.type === 'step.succeeded' && attempts.has(event.attempt))
        put(event.attempt, { endedAt: event.at });
    }
    return [...attempts.values()].sort((a, b) => a.attempt - b.attempt);
  }
  for (const event of trace) {
    if (!('step' in event) || event.step !== path) continue;
    if (event.type === 'step.started') put(event.attempt, { startedAt: event.at });
    else if (event.type === 'step.succeeded') put(event.attempt, { endedAt: event.at, outcome: 'succeeded' });
    else if (event.type === 'step.failed')
      put(event.attempt, { endedAt: event.at, outcome: 'failed', error: event.error });
    else if (event.type === 'step.retrying')
      put(event.attempt, { endedAt: event.at, outcome: 'retrying', error: event.error, delayMs: event.delayMs });
    else if (event.type === 'step.attempt_lost')
      put(event.attempt, {
        endedAt: event.at,
        outcome: event.outcome,
        ...(event.worker === undefined ? {} : { worker: event.worker }),
      });
  }
  return [...attempts.values()].sort((a, b) => a.attempt - b.attempt);
}

/** The step graph: the definition's nodes and edges with each step's status, laid out in columns; `source` says which definition it is. */
export function graphOf(
  record: ExecutionRecord,
  definition: AnyReactorDefinition | undefined,
  source?: GraphSource,
): GraphView {
  const from = source === undefined ? {} : { source };
  const parkedStep = record.status === 'parked' ? lastContendedStep(record.trace ?? []) : undefined;
  if (definition === undefined) {
    const names = [...new Set(Object.keys(record.steps).map((p) => p.split(/[.[]/)[0] ?? p))];
    const nodes = names.map((name, row): GraphNodeView => ({
      name,
      kind: 'step',
      status: statusOf(record, name, parkedStep),
      returns: false,
      layer: 0,
      row,
    }));
    return { nodes, edges: [], fromDefinition: false, ...from };
  }
  const layers = layerOf(definition.nodes);
  const rows = new Map<number, number>();
  const nodes = definition.nodes.map((node): GraphNodeView => {
    const layer = layers.get(node.name) ?? 0;
    const row = rows.get(layer) ?? 0;
    rows.set(layer, row + 1);
    return {
      name: node.name,
      kind: VIEW_KIND[node.kind],
      status: statusOf(record, node.name, parkedStep),
      returns: node.name === definition.returns,
      layer,
      row,
    };
  });
  const edges = definition.nodes.flatMap((node) =>
    node.dependsOn.map((dep) => ({
      from: dep,
      to: node.name,
      kind: readsResult(node, dep) ? ('result' as const) : ('waitFor' as const),
    })),
  );
  return { nodes, edges, fromDefinition: true, ...from };
}

/** How each node kind shows in the graph view: a step of any kind as a step, a child reactor of either kind as a compose. */
const VIEW_KIND: Readonly<Record<NodeKind, GraphNodeView['kind']>> = {
  step: 'step',
  'async-step': 'step',
  interrupt: 'step',
  sleep: 'step',
  'wait-for-event': 'step',
  compose: 'compose',
  'async-reactor': 'compose',
  map: 'map',
};

/** Steps the trace says were undone or compensated (the record keeps their earlier status). */
function rolledBack(trace: readonly ReactorEvent[]): Map<string, 'undone' | 'compensated'> {
  const out = new Map<string, 'undone' | 'compensated'>();
  for (const e of trace)
    if (e.type === 'step.undone' || e.type === 'step.compensated')
      out.set(e.step, e.type === 'step.undone' ? 'undone' : 'compensated');
  return out;
}

/** A node's status: rolled back per the trace, else its own record, else one derived from the records under it (compose, map). */
function statusOf(record: ExecutionRecord, name: string, parkedStep: string | undefined): GraphNodeView['status'] {
  const rolled = rolledBack(record.trace ?? []).get(name);
  if (rolled) return rolled;
  // A paused interrupt's record says `running`: it waits for a resume, not for its body.
  if (record.status === 'paused' && record.interrupts?.some((i) => i.step === name && i.resumedAt === undefined))
    return 'paused';
  const own = record.steps[name];
  if (own) return own.status;
  if (parkedStep === name) return 'parked';
  const inner = Object.entries(record.steps)
    .filter(([p]) => p.startsWith(`${name}.`) || p.startsWith(`${name}[`))
    .map(([, r]) => r.status);
  if (inner.length === 0) return 'pending';
  for (const status of ['failed', 'halted', 'running', 'retrying', 'undone', 'compensated'] as const)
    if (inner.includes(status)) return status;
  return 'completed';
}

/** The step of the newest contention event (the step a parked execution waits at), if any. */
export function lastContendedStep(trace: readonly ReactorEvent[]): string | undefined {
  for (let i = trace.length - 1; i >= 0; i--) {
    const event = trace[i];
    if (event?.type === 'run.parked') continue;
    if (event?.type === 'coordination.contended' || event?.type === 'coordination.waiting') return event.step;
  }
  return undefined;
}

/** Longest dependency path from a root, per node. */
function layerOf(nodes: readonly GraphNode[]): Map<string, number> {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const memo = new Map<string, number>();
  const visit = (name: string, depth: number): number => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const deps = depth > nodes.length ? [] : (byName.get(name)?.dependsOn ?? []);
    const layer = deps.length === 0 ? 0 : 1 + Math.max(...deps.map((d) => visit(d, depth + 1)));
    memo.set(name, layer);
    return layer;
  };
  for (const node of nodes) visit(node.name, 0);
  return memo;
}

function readsResult(node: GraphNode, step: string): boolean {
  const args = node.kind === 'map' ? { source: node.source } : (node.args ?? {});
  return Object.values(args).some((a) => a.source.kind === 'result' && a.source.step === step);
}
