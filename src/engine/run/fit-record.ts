/**
 * A terminal record the store refused as too large (`RecordTooLargeError`), made to fit, so an
 * execution that outgrew its record still ends in a terminal status (docs/limits.md,
 * docs/decisions/071).
 *
 * @module
 */
import type { ExecutionRecord, StepRecord } from '../../ports/store.js';

/** UTF-8 bytes of `record` as JSON (what the stores measure: large maps' element states are stored apart, under their own budget). */
export function recordBytes(record: ExecutionRecord): number {
  const { mapStates: _apart, ...measured } = record;
  return new TextEncoder().encode(JSON.stringify(measured)).length;
}

function sizeOf(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value === 'string') return value.length;
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * `record` without the element states of the map at `path` (kept apart from the record, they
 * outgrew their own budget): the terminal record no longer names them.
 */
function withoutMapStates(record: ExecutionRecord, path: string): ExecutionRecord {
  const { [path]: _dropped, ...mapStates } = record.mapStates ?? {};
  const { mapStates: _all, mapParts, ...rest } = record;
  const parts = (mapParts ?? []).filter((p) => p !== path);
  return {
    ...rest,
    ...(Object.keys(mapStates).length === 0 ? {} : { mapStates }),
    ...(parts.length === 0 ? {} : { mapParts: parts }),
  };
}

/**
 * `record` without what does not fit in `refused.limit` bytes; when what was refused is a large
 * map's element states (`refused.mapStates`), `record` without them. A failed, halted, cancelled or aborted
 * record drops step results first, largest first (the run rolled back: its results are not read
 * again), then `haltData`, then the trace. A completed record drops its `value` first (the caller
 * got it; the step results stay for a later `undo`), then the trace, then step results. What is
 * left may still be too large (an input near the limit); the store refuses it again.
 */
export function fitRecord(
  record: ExecutionRecord,
  refused: { readonly limit: number; readonly mapStates?: string },
): ExecutionRecord {
  if (refused.mapStates !== undefined) return withoutMapStates(record, refused.mapStates);
  const limit = refused.limit;
  let fitted: ExecutionRecord = record;
  const fits = (): boolean => recordBytes(fitted) <= limit;
  const dropValue = (): void => {
    if (fitted.value === undefined) return;
    const { value: _value, ...rest } = fitted;
    fitted = rest;
  };
  const dropHaltData = (): void => {
    if (fitted.haltData === undefined) return;
    const { haltData: _haltData, ...rest } = fitted;
    fitted = rest;
  };
  const dropTrace = (): void => {
    if (fitted.trace === undefined) return;
    const { trace: _trace, ...rest } = fitted;
    fitted = rest;
  };
  const dropResults = (): void => {
    const steps: Record<string, StepRecord> = { ...fitted.steps };
    const largest = Object.entries(steps)
      .filter(([, step]) => step.result !== undefined)
      .map(([name, step]) => [name, sizeOf(step.result)] as const)
      .sort((a, b) => b[1] - a[1]);
    let estimate = recordBytes(fitted); // measured again only once the estimate fits
    for (const [name, size] of largest) {
      const { result: _result, ...rest } = steps[name]!;
      steps[name] = rest;
      fitted = { ...fitted, steps };
      estimate -= size;
      if (estimate <= limit && fits()) return;
    }
  };
  const order =
    record.status === 'completed' ? [dropValue, dropTrace, dropResults] : [dropResults, dropHaltData, dropTrace];
  for (const drop of order) {
    if (fits()) break;
    drop();
  }
  return fitted;
}
