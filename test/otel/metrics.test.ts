/**
 * OpenTelemetry metrics: the middleware records the engine's events on a meter (a recording
 * meter here, implementing the `@opentelemetry/api` interface), with the documented names,
 * labels and values; gauges read their sources at collection.
 */
import type { Meter, ObservableCallback } from '@opentelemetry/api';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { defineStep, reactor } from '../../src/index.js';
import { METRICS, otelMetrics, stepLabel } from '../../src/otel/index.js';
import { createTestEngine } from '../../src/testing/index.js';

interface Observation {
  readonly name: string;
  readonly value: number;
  readonly labels: Readonly<Record<string, unknown>>;
}

/** A meter that keeps every observation, and the gauges' callbacks to collect them. */
function recordingMeter(): { meter: Meter; seen: Observation[]; collect: () => Promise<Observation[]> } {
  const seen: Observation[] = [];
  const callbacks: { name: string; callback: ObservableCallback }[] = [];
  const instrument = (name: string) => ({
    add: (value: number, labels: Record<string, unknown> = {}) => void seen.push({ name, value, labels }),
    record: (value: number, labels: Record<string, unknown> = {}) => void seen.push({ name, value, labels }),
  });
  const meter = {
    createCounter: instrument,
    createHistogram: instrument,
    createObservableGauge: (name: string) => ({
      addCallback: (callback: ObservableCallback) => void callbacks.push({ name, callback }),
    }),
  } as unknown as Meter;
  const collect = async (): Promise<Observation[]> => {
    const out: Observation[] = [];
    for (const { name, callback } of callbacks)
      await callback({
        observe: (value: number, labels: Record<string, unknown> = {}) => void out.push({ name, value, labels }),
      });
    return out;
  };
  return { meter, seen, collect };
}

const sum = (seen: readonly Observation[], name: string, labels: Record<string, string> = {}): number =>
  seen
    .filter((o) => o.name === name && Object.entries(labels).every(([k, v]) => o.labels[k] === v))
    .reduce((total, o) => total + o.value, 0);

describe('otelMetrics', () => {
  test('executions, attempts, durations, retries and outcomes with their labels', async () => {
    const { meter, seen } = recordingMeter();
    const t = createTestEngine({ middleware: [otelMetrics({ meter })] });
    let calls = 0;
    const flaky = reactor('flaky')
      .step('a', {
        retry: { maxAttempts: 2, baseDelay: '1s' },
        run: async () => {
          await t.clock.sleep(250);
          if (++calls === 1) throw new Error('once');
          return 1;
        },
      })
      .build();
    const failing = reactor('failing')
      .step('b', { run: () => Promise.reject(new Error('no')) })
      .build();
    expect((await t.run(flaky, {})).status).toBe('completed');
    expect((await t.run(failing, {})).status).toBe('failed');

    expect(sum(seen, METRICS.executionsStarted.name, { reactor: 'flaky' })).toBe(1);
    expect(sum(seen, METRICS.executionsFinished.name, { reactor: 'flaky', status: 'completed' })).toBe(1);
    expect(sum(seen, METRICS.executionsFinished.name, { reactor: 'failing', status: 'failed' })).toBe(1);
    expect(sum(seen, METRICS.stepAttempts.name, { reactor: 'flaky', step: 'a' })).toBe(2);
    const durations = seen.filter((o) => o.name === METRICS.stepDuration.name && o.labels.reactor === 'flaky');
    expect(durations.map((d) => d.labels.outcome)).toEqual(['retrying', 'succeeded']);
    expect(durations.map((d) => d.value)).toEqual([0.25, 0.25]); // seconds on the manual clock
  });

  test('map elements share one step label, and gauges read their sources when collected', async () => {
    const { meter, seen, collect } = recordingMeter();
    const gauges = {
      queueJobs: async () => ({ waiting: 3, delayed: 1 }),
      queueOldestWaitingMs: async () => 1_500,
      executionsByStatus: async () => {
        throw new Error('store down'); // skipped for this collection
      },
    };
    const t = createTestEngine({ middleware: [otelMetrics({ meter, gauges })] });
    const double = defineStep({ input: { x: z.number() }, run: ({ x }) => x * 2 });
    const r = reactor('mapped')
      .input({ xs: z.array(z.number()) })
      .map('all', { source: ($) => $.input('xs'), each: double, args: (x) => ({ x }) })
      .build();
    expect((await t.run(r, { xs: [1, 2, 3] })).status).toBe('completed');
    expect(stepLabel('orders.all[12]')).toBe('orders.all[]');
    expect(sum(seen, METRICS.stepAttempts.name, { step: 'all[]' })).toBe(3);
    expect(await collect()).toEqual([
      { name: METRICS.queueJobs.name, value: 3, labels: { state: 'waiting' } },
      { name: METRICS.queueJobs.name, value: 1, labels: { state: 'delayed' } },
      { name: METRICS.queueOldestAge.name, value: 1.5, labels: {} },
    ]);
  });
});
