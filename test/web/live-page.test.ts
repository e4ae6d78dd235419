/**
 * The execution page as served for the live script (docs/realtime.md): an unfinished execution's
 * page names its event stream on `<body data-stream>` (under the base path), a finished one's does
 * not, nor any page when `refreshSeconds` is 0; each step's newest progress on the record is shown
 * beside it; the trace rows carry the keys the script matches stream events with.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { z } from 'zod';
import { createEmbeddedEngine, reactor, type EmbeddedEngine, type StepContext } from '../../src/index.js';
import { createDashboard } from '../../src/web/index.js';

const gates = new Map<string, Promise<void>>();

const job = reactor('live-page-job')
  .input({ n: z.number() })
  .step('work', {
    args: ($) => ({ n: $.input('n') }),
    run: async ({ n }, ctx: StepContext<{ done: number; of: string }>) => {
      for (let done = 1; done <= n; done++) ctx.progress({ done, of: `<${String(n)}>` });
      await gates.get(ctx.executionId);
      return n;
    },
  })
  .returns('work');

let engine: EmbeddedEngine;
beforeAll(() => {
  engine = createEmbeddedEngine({ reactors: [job] });
});
afterAll(async () => {
  await engine?.close();
});

const html = async (refreshSeconds: number | undefined, id: string): Promise<string> => {
  const app = createDashboard({
    engine,
    reactors: [job],
    basePath: '/ops',
    ...(refreshSeconds === undefined ? {} : { refreshSeconds }),
  });
  const response = await app.request(`/ops/executions/${id}`);
  expect(response.status).toBe(200);
  return response.text();
};

test('an unfinished execution names its stream; a finished one does not, nor any page with refreshSeconds 0', async () => {
  let open = (): void => undefined;
  const started = await engine.start(job, { n: 1 });
  gates.set(started.executionId, new Promise<void>((resolve) => (open = resolve)));
  const running = await html(undefined, started.executionId);
  expect(running).toContain(`data-stream="/ops/executions/${started.executionId}/stream"`);
  expect(running).toContain('data-terminal="false"');
  expect(await html(0, started.executionId)).not.toContain('data-stream=');
  open();
  expect((await engine.wait(started.executionId)).status).toBe('completed');
  const done = await html(undefined, started.executionId);
  expect(done).not.toContain('data-stream=');
  expect(done).toContain('data-execution-status="completed" data-terminal="true"');
});

test("each step's newest progress on the record is shown beside it, escaped; trace rows carry their keys", async () => {
  const { executionId } = await engine.start(job, { n: 3 });
  expect((await engine.wait(executionId)).status).toBe('completed');
  expect((await engine.store.get(executionId))?.progress?.['work']?.data).toEqual({ done: 3, of: '<3>' });
  const page = await html(undefined, executionId);
  expect(page).toMatch(
    /<tr data-step="work">.*?<div class="progress" data-progress="work" title="attempt 1, [^"]+">\{&quot;done&quot;:3,&quot;of&quot;:&quot;&lt;3&gt;&quot;\}<\/div>/s,
  );
  const started = (await engine.store.get(executionId))?.trace?.find((e) => e.type === 'step.started');
  expect(page).toContain(
    `<tr data-event="step.started" data-at="${new Date(started!.at).toISOString()}" data-event-step="work">`,
  );
});
