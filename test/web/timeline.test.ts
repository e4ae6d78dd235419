/**
 * The execution page's timeline and trace, on a manual clock: a retry does not stretch the
 * retried execution's axis (a retry is an execution of its own); a rate-limit park ends at the
 * job that resumed it; every time on the page reads as a date or an offset, never as epoch
 * milliseconds. And an execution's step graph is drawn from its own version's definition when a
 * later version is registered beside it.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { reactor } from '../../src/index.js';
import { createReadModel } from '../../src/ops/index.js';
import type { TestEngine } from '../../src/testing/index.js';
import { createDashboard } from '../../src/web/index.js';
import { journeyReactor, manualEngine, recordUntil, runJourney, timeOf } from './timeline-fixtures.js';

const page = async (app: ReturnType<typeof createDashboard>, id: string): Promise<string> =>
  (await app.request(`/executions/${encodeURIComponent(id)}`)).text();
const timeline = (html: string): string => /<svg class="timeline".*?<\/svg>/s.exec(html)?.[0] ?? '';
const spanOf = (html: string): number => Number(/data-span-ms="(\d+)"/.exec(timeline(html))?.[1]);

/** The `data-offset-ms` and `data-duration-ms` of each bar of `kind` on `lane`. */
function bars(html: string, lane: string, kind: string): { offset: number; duration: number }[] {
  const row = new RegExp(`<g class="lane" data-lane="${lane}">.*?</g>`, 's').exec(timeline(html))?.[0] ?? '';
  return [...row.matchAll(new RegExp(`data-bar="${kind}" data-offset-ms="(\\d+)" data-duration-ms="(\\d+)"`, 'g'))].map(
    (m) => ({ offset: Number(m[1]), duration: Number(m[2]) }),
  );
}

async function settled(t: TestEngine, id: string, status: string): Promise<void> {
  await recordUntil(t, id, `status ${status}`, (r) => r.status === status);
}

test("a retry seven minutes later leaves the retried execution's axis as it was; the page names the retry", async () => {
  const t = manualEngine();
  const flaky = reactor('flaky')
    .step('reserve', { run: () => (t.clock.advance(400), 'r-1') })
    .step('charge', {
      waitFor: ['reserve'],
      run: () => {
        t.clock.advance(600);
        throw new Error('card declined');
      },
    })
    .build();
  const app = createDashboard({ engine: t.engine, reactors: [flaky], refreshSeconds: 0 });
  const { executionId: id } = await t.engine.start(flaky, {});
  await settled(t, id, 'failed');
  const before = await page(app, id);
  expect(spanOf(before)).toBe(1_000);

  t.clock.advance('7m');
  const retried = await t.engine.retry(id);
  await settled(t, retried.executionId, 'failed');
  const after = await page(app, id);
  const record = await t.engine.store.get(id);
  expect(record?.trace?.at(-1)?.type).toBe('run.retried'); // the link is in the trace, 7 minutes on
  expect(timeline(after)).toBe(timeline(before));
  expect(after).toContain(`Retried as <a class="mono" href="/executions/${retried.executionId}">`);
  expect(after).toContain('a retry is an execution of its own, with its own timeline');
  expect(after).toMatch(/<tr data-event="run.retried"[^>]*><td class="mono"><time [^>]*>\+7 min 1 s<\/time>/);
  await t.close();
});

test('a rate-limit park ends at the job that resumed it, not over the attempts after it', async () => {
  const t = manualEngine();
  const api = reactor('api')
    .input({ n: z.number() })
    .step('call', {
      rateLimit: { key: () => 'partner', limit: 1, per: '1s' },
      retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: '2s' },
      run: ({ n }) => {
        t.clock.advance(100);
        if (n === 2 && calls++ === 0) throw new Error('flaky');
        return n;
      },
    })
    .build();
  let calls = 0;
  const app = createDashboard({ engine: t.engine, reactors: [api], refreshSeconds: 0 });
  const first = await t.engine.start(api, { n: 1 });
  await settled(t, first.executionId, 'completed');
  const second = await t.engine.start(api, { n: 2 });
  await recordUntil(t, second.executionId, 'the rate-limit park', (r) =>
    (r.trace ?? []).some((e) => e.type === 'run.parked' && e.primitive === 'rate_limit'),
  );
  t.clock.advance(1_000);
  await recordUntil(t, second.executionId, 'the retry', (r) =>
    (r.trace ?? []).some((e) => e.type === 'run.queued' && e.reason === 'retry'),
  );
  t.clock.advance(2_000);
  await settled(t, second.executionId, 'completed');
  const trace = (await t.engine.store.get(second.executionId))?.trace ?? [];
  const parkedAt = timeOf(trace, 'run.parked');
  const resumedAt = timeOf(trace, 'run.resumed', 'run.parked');
  const from = trace[0]!.at;

  const html = await page(app, second.executionId);
  const [park, ...more] = bars(html, 'execution', 'park');
  expect(more).toEqual([]);
  expect(park).toEqual({ offset: parkedAt - from, duration: resumedAt - parkedAt });
  const [failed] = bars(html, 'call', 'failed');
  const attempts = bars(html, 'call', 'attempt');
  expect(attempts).toHaveLength(1);
  expect(park!.offset + park!.duration).toBeLessThanOrEqual(failed!.offset);
  expect(failed!.offset + failed!.duration).toBeLessThanOrEqual(attempts[0]!.offset);
  expect(timeline(html)).toContain('parked on rate_limit partner at step call, resumed by its own job');
  await t.close();
});

test('every time of the trace and the timeline reads as a date or an offset, never as epoch milliseconds', async () => {
  const t = manualEngine();
  const journey = journeyReactor(t.clock);
  const id = await runJourney(t, journey);
  const app = createDashboard({ engine: t.engine, coordinator: t.coordinator, reactors: [journey], refreshSeconds: 0 });
  const html = await page(app, id);
  const trace = (await t.engine.store.get(id))?.trace ?? [];

  const traced = /<h2>Timeline<\/h2>.*$/s.exec(html)?.[0] ?? ''; // the timeline, the steps and the trace
  expect(traced).toContain('<table class="trace">');
  // No epoch ms in the timeline or the trace (a lock's 16-digit fencing token is no time; a step's result is shown as it is).
  expect(traced.replace(/<table class="steps">.*?<\/table>/s, '')).not.toMatch(/(?<![\d.])\d{13}(?![\d.])/);
  // Each row: its offset from the first entry, the date in its tooltip.
  const first = new Date(trace[0]!.at).toISOString();
  expect(html).toContain(`<time datetime="${first}" title="2026-01-01 00:00:00.000 UTC">+0 ms</time>`);
  const sleeping = new Date(timeOf(trace, 'step.sleeping')).toISOString();
  expect(html).toContain(`<time datetime="${sleeping}" title="2026-01-01 00:00:01.500 UTC">+1.5 s</time>`);
  // A time field: a date in the one-line reading and in the folded JSON.
  expect(html).toContain('wakeAt 2026-01-01 00:00:03.500 UTC');
  expect(html).toContain('&quot;wakeAt&quot;: &quot;2026-01-01T00:00:03.500Z&quot;');
  // The axis: offsets, each tick's date in its tooltip; a bar's tooltip gives its dates.
  expect(timeline(html)).toContain('+20 s<title>2026-01-01 00:00:20.000 UTC</title>');
  expect(timeline(html)).toContain('+3.5 s for 15.0 s · 2026-01-01 00:00:03.500 UTC → 2026-01-01 00:00:18.500 UTC');
  await t.close();
});

describe('versioned definitions', () => {
  const v1 = reactor('shipping', { version: '1' })
    .step('pack', { run: () => 'packed' })
    .step('ship', { waitFor: ['pack'], run: () => 'shipped' })
    .build();
  const v2 = reactor('shipping', { version: '2' })
    .step('pack', { run: () => 'packed' })
    .step('label', { waitFor: ['pack'], run: () => 'labelled' })
    .step('ship', { waitFor: ['label'], run: () => 'shipped' })
    .build();
  const v3 = reactor('shipping', { version: '3', migrateFrom: [{ version: '1', renamed: { ship: 'dispatch' } }] })
    .step('pack', { run: () => 'packed' })
    .step('dispatch', { waitFor: ['pack'], run: () => 'dispatched' })
    .build();

  /** The step names of the page's graph, in order, and the note on where it comes from. */
  async function graph(app: ReturnType<typeof createDashboard>, id: string) {
    const html = await page(app, id);
    const svg = /<svg class="dag".*?<\/svg>/s.exec(html)?.[0] ?? '';
    return {
      steps: [...svg.matchAll(/<g class="node[^"]*" data-step="([^"]+)"/g)].map((m) => m[1]),
      edges: (svg.match(/<path d="M/g) ?? []).length - 1, // the arrow marker is a path too
      source: /data-graph-source="([a-z]+)"(?: data-version="([^"]+)")?/.exec(html)?.slice(1, 3),
    };
  }

  async function executions(): Promise<{ t: TestEngine; one: string; two: string }> {
    const t = manualEngine();
    const one = (await t.engine.start(v1, {})).executionId;
    await settled(t, one, 'completed');
    const two = (await t.engine.start(v2, {})).executionId;
    await settled(t, two, 'completed');
    return { t, one, two };
  }

  test("with v1 and v2 registered, a v1 execution's graph is drawn from v1 and a v2 one's from v2", async () => {
    const { t, one, two } = await executions();
    const app = createDashboard({ engine: t.engine, reactors: [v1, v2], refreshSeconds: 0 });
    expect(await graph(app, one)).toEqual({ steps: ['pack', 'ship'], edges: 1, source: ['own', '1'] });
    expect(await graph(app, two)).toEqual({ steps: ['pack', 'label', 'ship'], edges: 2, source: ['own', '2'] });
    const model = createReadModel({ store: t.engine.store, reactors: [v1, v2] });
    expect((await model.execution(one))?.graph.source).toEqual({
      kind: 'own',
      version: '1',
      fingerprint: v1.fingerprint,
    });
    await t.close();
  });

  test('without its version registered, the graph comes from the record; with a version migrating from it, from that one', async () => {
    const { t, one } = await executions();
    const onlyV2 = createDashboard({ engine: t.engine, reactors: [v2], refreshSeconds: 0 });
    expect(await graph(onlyV2, one)).toEqual({ steps: ['pack', 'ship'], edges: 0, source: ['unregistered', '1'] });
    expect(await page(onlyV2, one)).toContain(
      `The definition it runs with (version &quot;1&quot;, fingerprint ${v1.fingerprint}) is not registered with this dashboard`,
    );
    const migrating = createDashboard({ engine: t.engine, reactors: [v3], refreshSeconds: 0 });
    const drawn = await graph(migrating, one);
    expect(drawn).toEqual({ steps: ['pack', 'dispatch'], edges: 1, source: ['migrating', '3'] });
    expect(await page(migrating, one)).toMatch(/data-step="dispatch" data-status="completed"/);
    await t.close();
  });
});
