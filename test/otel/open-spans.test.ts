/** Step paths and the span a nested span belongs under. */
import { trace } from '@opentelemetry/api';
import { expect, test } from 'vitest';
import { ancestors, OpenSpans } from '../../src/otel/open-spans.js';
import { spanStepName } from '../../src/otel/spans.js';

const span = (): ReturnType<typeof trace.wrapSpanContext> =>
  trace.wrapSpanContext({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 });

test('ancestors of a path, nearest first', () => {
  expect(ancestors('charge')).toEqual([]);
  expect(ancestors('payment.charge')).toEqual(['payment']);
  expect(ancestors('lines[2]')).toEqual(['lines']);
  expect(ancestors('order.lines[2].charge')).toEqual(['order.lines[2]', 'order.lines', 'order']);
});

test('span names drop map indexes', () => {
  expect(spanStepName('order.lines[12].charge')).toBe('order.lines[].charge');
  expect(spanStepName('charge')).toBe('charge');
});

test('a nested span belongs under its nearest open ancestor step, else the innermost frame; closing removes exactly what was opened', () => {
  const open = new OpenSpans();
  const outer = { span: span() };
  const inner = { span: span() };
  const closeOuter = open.pushFrame('e1', outer);
  const closeInner = open.pushFrame('e1', inner);
  expect(open.frame('e1')).toBe(inner);
  expect(open.parentOf('e1', 'a.b')).toBe(inner);
  const a = { span: span() };
  const removeA = open.addNested('step', 'e1', 'a', a);
  expect(open.parentOf('e1', 'a.b[3].c')).toBe(a);
  expect(open.parentOf('e2', 'a.b')).toBeUndefined();
  expect(open.size).toBe(3);
  closeInner();
  expect(open.frame('e1')).toBe(outer);
  removeA();
  closeOuter();
  closeOuter();
  expect(open.size).toBe(0);
  expect(open.frame('e1')).toBeUndefined();
});
