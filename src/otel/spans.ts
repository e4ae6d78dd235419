/**
 * Opening spans for the engine's work scopes: names, kinds, parents, attributes, and how each
 * ends. Parents are found explicitly (persisted trace context, open frames, step paths), so
 * the tree is right with or without a context manager; the work inside runs with its span
 * active, so spans an application starts in a step body nest under the step.
 *
 * @module
 */
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { WorkEnd, WorkHandle, WorkScope } from '../engine/model/instrument.js';
import type { TraceContext } from '../ports/store.js';
import { ATTR } from './attributes.js';
import type { NestedKind, OpenSpan, OpenSpans } from './open-spans.js';
import { fromTraceContext, toTraceContext } from './trace-context.js';

/** What opening a span needs. */
export interface SpanDeps {
  readonly tracer: () => Tracer;
  readonly open: OpenSpans;
}

/** A span name of low cardinality: map indexes are dropped (`items[3].charge` → `items[].charge`). */
export function spanStepName(path: string): string {
  return path.replace(/\[\d+\]/g, '[]');
}

/** Opens the span of a scope. */
export function openScope(deps: SpanDeps, scope: WorkScope): WorkHandle {
  switch (scope.kind) {
    case 'run':
      return openRun(deps, scope);
    case 'enqueue':
      return openEnqueue(deps, scope);
    case 'step':
    case 'compensate':
    case 'undo':
      return openNested(deps, scope);
  }
}

type RunScope = Extract<WorkScope, { kind: 'run' }>;
type EnqueueScope = Extract<WorkScope, { kind: 'enqueue' }>;
type NestedScope = Extract<WorkScope, { kind: NestedKind }>;

/** Span links to related executions' traces (a retry: the retried one); unreadable contexts are skipped. */
function linksOf(contexts: readonly TraceContext[] | undefined): Link[] {
  return (contexts ?? []).flatMap((carrier) => {
    const remote = fromTraceContext(carrier);
    return remote ? [{ context: remote, attributes: { [ATTR.linkKind]: 'retry_of' } }] : [];
  });
}

/** The parent of a frame: the persisted trace context when readable, else the active context. */
function frameParent(carrier: TraceContext | undefined): { parent: Context; invalid: boolean } {
  if (carrier === undefined) return { parent: context.active(), invalid: false };
  const remote = fromTraceContext(carrier);
  return remote
    ? { parent: trace.setSpanContext(ROOT_CONTEXT, remote), invalid: false }
    : { parent: context.active(), invalid: true };
}

function openRun(deps: SpanDeps, scope: RunScope): WorkHandle {
  const { parent, invalid } = frameParent(scope.traceContext);
  const attributes: Attributes = {
    [ATTR.executionId]: scope.executionId,
    [ATTR.rootExecutionId]: scope.rootExecutionId,
    [ATTR.reactor]: scope.reactor,
    [ATTR.runMode]: scope.mode,
    ...(scope.job ? { [ATTR.jobId]: scope.job.jobId, [ATTR.delivery]: scope.job.delivery } : {}),
    ...(invalid ? { [ATTR.traceContextInvalid]: true } : {}),
  };
  const span = deps.tracer().startSpan(
    `run ${scope.reactor}`,
    {
      kind: scope.mode === 'worker' ? SpanKind.CONSUMER : SpanKind.INTERNAL,
      attributes,
      links: linksOf(scope.links),
    },
    parent,
  );
  const open: OpenSpan = { span };
  const close = deps.open.pushFrame(scope.executionId, open);
  // A run without a readable persisted context roots the execution's trace from here on.
  const started = scope.traceContext === undefined || invalid ? toTraceContext(span.spanContext()) : undefined;
  return handle(span, parent, started, (end) => {
    close();
    const outcome = end.outcome === 'failed' ? 'failed' : (open.outcome ?? 'unknown');
    span.setAttribute(ATTR.runOutcome, outcome);
    const error = end.outcome === 'failed' ? end.error : open.error;
    span.setStatus(
      outcome === 'failed'
        ? { code: SpanStatusCode.ERROR, ...(error ? { message: error.message } : {}) }
        : { code: SpanStatusCode.OK },
    );
  });
}

function openEnqueue(deps: SpanDeps, scope: EnqueueScope): WorkHandle {
  const frame = deps.open.frame(scope.executionId);
  const { parent, invalid } = frame
    ? { parent: trace.setSpan(context.active(), frame.span), invalid: false }
    : frameParent(scope.traceContext);
  const attributes: Attributes = {
    [ATTR.executionId]: scope.executionId,
    [ATTR.reactor]: scope.reactor,
    [ATTR.jobId]: scope.jobId,
    [ATTR.enqueueReason]: scope.reason,
    [ATTR.delayMs]: scope.delayMs,
  };
  const span = deps
    .tracer()
    .startSpan(
      `enqueue ${scope.reactor}`,
      { kind: SpanKind.PRODUCER, attributes, links: linksOf(scope.links) },
      parent,
    );
  // The enqueue that accepts a new execution is its trace's root frame.
  const root = scope.traceContext === undefined || invalid;
  const close = root ? deps.open.pushFrame(scope.executionId, { span }) : () => undefined;
  return handle(span, parent, root ? toTraceContext(span.spanContext()) : undefined, (end) => {
    close();
    span.setStatus(
      end.outcome === 'failed'
        ? { code: SpanStatusCode.ERROR, ...(end.error ? { message: end.error.message } : {}) }
        : { code: SpanStatusCode.OK },
    );
  });
}

function openNested(deps: SpanDeps, scope: NestedScope): WorkHandle {
  const above = deps.open.parentOf(scope.executionId, scope.step);
  const parent = above ? trace.setSpan(context.active(), above.span) : context.active();
  const attributes: Attributes = {
    [ATTR.executionId]: scope.executionId,
    [ATTR.reactor]: scope.reactor,
    [ATTR.step]: scope.step,
    ...(scope.kind === 'step' ? { [ATTR.attempt]: scope.attempt } : {}),
  };
  const span = deps
    .tracer()
    .startSpan(`${scope.kind} ${spanStepName(scope.step)}`, { kind: SpanKind.INTERNAL, attributes }, parent);
  const close = deps.open.addNested(scope.kind, scope.executionId, scope.step, { span });
  return handle(span, parent, undefined, (end) => {
    close();
    if (scope.kind === 'step') span.setAttribute(ATTR.stepOutcome, end.outcome);
    // A parked step ends OK: it did not fail, a later job runs it (docs/decisions/028).
    span.setStatus(
      end.outcome === 'failed'
        ? { code: SpanStatusCode.ERROR, ...(end.error ? { message: end.error.message } : {}) }
        : { code: SpanStatusCode.OK },
    );
  });
}

/** A handle that runs work with `span` active under `parent` and ends the span once. */
function handle(
  span: Span,
  parent: Context,
  traceContext: TraceContext | undefined,
  finish: (end: WorkEnd) => void,
): WorkHandle {
  const active = trace.setSpan(parent, span);
  let ended = false;
  return {
    ...(traceContext === undefined ? {} : { traceContext }),
    run: (work) => context.with(active, work),
    end: (end) => {
      if (ended) return;
      ended = true;
      try {
        finish(end);
      } finally {
        span.end();
      }
    },
  };
}
