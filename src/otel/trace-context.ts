/**
 * The W3C `traceparent` / `tracestate` form of a span context, as persisted on an execution
 * record. Written and read here (not through the global propagator), so trace continuity does
 * not depend on which propagator an application registers.
 *
 * @module
 */
import { createTraceState, isSpanContextValid, type SpanContext } from '@opentelemetry/api';
import type { TraceContext } from '../ports/store.js';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/** The persisted form of a span context. */
export function toTraceContext(span: SpanContext): TraceContext {
  const traceparent = `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  const tracestate = span.traceState?.serialize();
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/**
 * The remote span context a persisted trace context names; `undefined` when it is not a valid
 * W3C `traceparent` (version `ff`, all-zero ids, wrong lengths or characters).
 */
export function fromTraceContext(carrier: TraceContext): SpanContext | undefined {
  const match = TRACEPARENT.exec(typeof carrier.traceparent === 'string' ? carrier.traceparent.trim() : '');
  if (!match || match[1] === 'ff' || (match[1] === '00' && match[0].length !== 55)) return undefined;
  const span: SpanContext = {
    traceId: match[2]!,
    spanId: match[3]!,
    traceFlags: parseInt(match[4]!, 16),
    isRemote: true,
    ...(typeof carrier.tracestate === 'string' && carrier.tracestate.length > 0
      ? { traceState: createTraceState(carrier.tracestate) }
      : {}),
  };
  return isSpanContextValid(span) ? span : undefined;
}
