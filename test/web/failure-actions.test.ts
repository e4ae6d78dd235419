/**
 * The dashboard and executions paused on a step's failure, on the embedded memory backend through
 * `app.request()`: the list and detail pages say so, the detail page offers Retry step, Skip
 * step, Roll back and Fork (each behind a confirm page), and each goes through the engine.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Hono } from 'hono';
import { createEmbeddedEngine, MemoryCoordinator, type EmbeddedEngine } from '../../src/index.js';
import { createDashboard, type ExecutionDetail } from '../../src/web/index.js';
import { ledger, order, type Ledger } from '../steer/helpers.js';

let engine: EmbeddedEngine;
let l: Ledger;
const r = () => order(l, 'steer-web');
const dash = (): Hono =>
  createDashboard({ engine, coordinator: new MemoryCoordinator(), reactors: [r()], refreshSeconds: 0 });
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  body: new URLSearchParams(fields),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

beforeEach(() => {
  l = ledger();
  engine = createEmbeddedEngine({ coordinator: new MemoryCoordinator() });
});
afterEach(async () => {
  await engine.close();
});

async function pausedRun(orderId: string): Promise<string> {
  const paused = await engine.run(r(), { orderId, amount: 2 });
  expect(paused).toBePausedOnFailure('charge');
  return paused.executionId;
}

describe('a run paused on a failure on the dashboard', () => {
  test('the list and the detail page say it is paused on the failure and offer its actions, not resume', async () => {
    const id = await pausedRun('d1');
    const app = dash();
    const list = await (await app.request('/executions?status=paused')).text();
    expect(list).toContain('paused on the failure of <code>charge</code>: card declined');
    const page = await (await app.request(`/executions/${id}`)).text();
    expect(page).toContain('data-paused-on="failure"');
    for (const action of ['retry-step', 'skip-step', 'rollback', 'fork'])
      expect(page).toContain(`data-action="${action}"`);
    expect(page).not.toContain('data-action="resume"');
    const api = (await (await app.request(`/api/executions/${id}`)).json()) as ExecutionDetail & { actions: string[] };
    expect(api.pausedOn).toMatchObject({ kind: 'failure', step: 'charge', error: { message: 'card declined' } });
    expect(api.actions).toEqual(expect.arrayContaining(['cancel', 'retry-step', 'skip-step', 'rollback', 'fork']));
  });

  test('Retry step asks for confirmation, then runs the step again and the run completes', async () => {
    const id = await pausedRun('d2');
    const app = dash();
    const confirm = await (await app.request(`/executions/${id}/actions/retry-step`)).text();
    expect(confirm).toContain('<textarea name="args"');
    l.failCharge = false;
    const done = await app.request(`/executions/${id}/actions/retry-step`, form({ confirm: 'yes' }));
    expect(done.status).toBe(303);
    expect((await engine.result(id))?.status).toBe('completed');
    expect(l.bodies).toEqual({ reserve: 1, price: 1, charge: 2, ship: 1 });
    // A second click on the same (now finished) execution is refused.
    const again = await app.request(`/executions/${id}/actions/retry-step`, form({ confirm: 'yes' }));
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('does not apply to an execution that is completed');
    expect(l.bodies.charge).toBe(2);
  });

  test('Skip step continues with the value; Roll back undoes newest first; Fork starts a linked execution', async () => {
    const app = dash();
    const skipped = await pausedRun('d3');
    const skip = await app.request(
      `/executions/${skipped}/actions/skip-step`,
      form({ confirm: 'yes', value: '{"id":"manual"}' }),
    );
    expect(skip.status).toBe(303);
    expect(await engine.result(skipped)).toMatchObject({ status: 'completed', value: 'shipped with manual' });
    const rolled = await pausedRun('d4');
    const rollback = await app.request(`/executions/${rolled}/actions/rollback`, form({ confirm: 'yes' }));
    expect(rollback.status).toBe(303);
    expect((await engine.result(rolled))?.status).toBe('failed');
    expect(l.rollback).toEqual(['compensate charge', 'undo price', 'undo reserve']);
    l.failCharge = false;
    const fork = await app.request(`/executions/${rolled}/actions/fork`, form({ confirm: 'yes', fromStep: 'reserve' }));
    expect(fork.status).toBe(303);
    const location = decodeURIComponent(fork.headers.get('location') ?? '');
    const forkId = /\/executions\/([^?]+)/.exec(location)?.[1];
    expect(forkId).toBeDefined();
    expect(forkId).not.toBe(rolled);
    expect(await engine.result(forkId!)).toMatchObject({ status: 'completed', value: 'shipped with ch-4' });
  });
});
