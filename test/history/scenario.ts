/**
 * The paging scenario both stores run: `total` executions tagged `batch: b1` (and a few tagged
 * otherwise) started with `startMany`, then listed by tag page by page while more `b1` executions
 * are started between the pages, and the pool runs them (status changes under the listing).
 */
import type { AnyReactorDefinition, Engine } from '../../src/index.js';

/** What the scenario saw: the ids it created before listing, the ids listed, and how many it added meanwhile. */
export interface PagingReport {
  readonly created: readonly string[];
  readonly listed: readonly string[];
  readonly added: number;
}

/** Runs the scenario on `engine` (see the module comment). */
export async function pageThroughWhileAdding(options: {
  readonly engine: Pick<Engine, 'startMany' | 'list'>;
  readonly reactor: AnyReactorDefinition;
  readonly total: number;
  readonly pageSize: number;
  /** Called once the `total` executions exist, before the first page (a clock moved on, a wait). */
  readonly afterCreate?: (newestCreatedAt: number) => unknown;
}): Promise<PagingReport> {
  const { engine, reactor, total, pageSize } = options;
  const created: string[] = [];
  const chunk = 1_000;
  for (let start = 0; start < total; start += chunk) {
    const entries = Array.from({ length: Math.min(chunk, total - start) }, (_, i) => ({
      reactor,
      input: { n: start + i },
      options: { tags: { batch: 'b1', n: String(start + i) } },
    }));
    const results = await engine.startMany(entries as never);
    created.push(...(results as readonly { executionId: string }[]).map((r) => r.executionId));
  }
  // Others in the same store that the tag filter must leave out.
  await engine.startMany(
    Array.from({ length: 50 }, (_, i) => ({ reactor, input: { n: i }, options: { tags: { batch: 'b2' } } })) as never,
  );
  const newest = (await engine.list({ tags: { batch: 'b1' }, limit: 1 })).executions[0]?.createdAt ?? 0;
  await options.afterCreate?.(newest);

  const listed: string[] = [];
  let added = 0;
  let cursor: string | undefined;
  let page = 0;
  do {
    // New executions with the same tag, started while a page after the first is read (the first page
    // takes what exists when it is read): newer than the cursor, so never listed.
    const adding =
      page++ % 4 === 1
        ? engine.startMany(
            Array.from({ length: 25 }, (_, i) => ({
              reactor,
              input: { n: -i },
              options: { tags: { batch: 'b1' } },
            })) as never,
          )
        : undefined;
    const query = { tags: { batch: 'b1' }, limit: pageSize, ...(cursor === undefined ? {} : { cursor }) };
    const [result, more] = await Promise.all([engine.list(query), adding]);
    listed.push(...result.executions.map((e) => e.executionId));
    cursor = result.cursor;
    added += (more as readonly unknown[] | undefined)?.length ?? 0;
  } while (cursor !== undefined);
  return { created, listed, added };
}
