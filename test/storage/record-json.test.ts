/**
 * A record's and an event's JSON text (`src/storage/record-json.ts`): the same JSON as
 * `JSON.stringify`, whatever the record holds, with each event serialized once however many
 * records and stream appends carry it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReactorEvent } from '../../src/ports/events.js';
import { RECORD_VERSION, type ExecutionRecord } from '../../src/ports/store.js';
import { RecordTooLargeError } from '../../src/errors.js';
import { checkJsonBytes, eventJson, limitedRecordJson, recordJson } from '../../src/storage/record-json.js';

function record(extra: Partial<ExecutionRecord> = {}): ExecutionRecord {
  return {
    v: RECORD_VERSION,
    id: 'e1',
    rootId: 'e1',
    reactor: 'r',
    status: 'running',
    input: { name: 'Zoë', n: 0.1 + 0.2, list: [] },
    steps: { a: { status: 'completed', attempts: 1, result: { ok: true } } },
    rollbackFailures: [],
    createdAt: 1,
    updatedAt: 2,
    ...extra,
  };
}

const event = (type: string, at: number, more: Record<string, unknown> = {}): ReactorEvent =>
  ({ type, reactor: 'r', executionId: 'e1', rootExecutionId: 'e1', at, ...more }) as unknown as ReactorEvent;

describe('recordJson', () => {
  it('gives the JSON of JSON.stringify: with a trace, an empty one, none, or one left undefined', () => {
    const trace = [event('run.queued', 1, { jobId: 'j:1' }), event('step.started', 2, { step: 'a', attempt: 1 })];
    for (const r of [
      record({ trace }),
      record({ trace: [] }),
      record(),
      { ...record(), trace: undefined } as unknown as ExecutionRecord,
      { trace } as unknown as ExecutionRecord,
    ]) {
      const text = recordJson(r);
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(r)));
    }
  });

  it('writes each trace entry from its event text, kept from the first time it was serialized', () => {
    const started = event('step.started', 2, { step: 'a', attempt: 1 });
    const first = eventJson(started);
    expect(first).toBe(JSON.stringify(started));
    expect(eventJson(started)).toBe(first);
    const text = recordJson(record({ trace: [started] }));
    expect(text.endsWith(`,"trace":[${first}]}`)).toBe(true);
  });

  it('matches JSON.stringify for any JSON-shaped record and trace', () => {
    const json = fc.jsonValue();
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), json),
        fc.array(fc.dictionary(fc.string(), json), { maxLength: 5 }),
        (rest, entries) => {
          const r = { ...rest, trace: entries } as unknown as ExecutionRecord;
          expect(JSON.parse(recordJson(r))).toEqual(JSON.parse(JSON.stringify(r)));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('limitedRecordJson', () => {
  it('gives the record JSON when it fits, and refuses it by its UTF-8 size, not its length, when it does not', () => {
    const small = record();
    expect(limitedRecordJson(small, 10_000)).toBe(recordJson(small));
    const wide = record({ input: { text: 'é'.repeat(300) } }); // 2 UTF-8 bytes per character
    const json = recordJson(wide);
    const bytes = Buffer.byteLength(json);
    expect(bytes).toBeGreaterThan(json.length);
    expect(limitedRecordJson(wide, bytes)).toBe(json);
    let error: unknown;
    try {
      limitedRecordJson(wide, json.length); // its length would fit, its bytes do not
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RecordTooLargeError);
    expect((error as RecordTooLargeError).code).toBe('record_too_large');
    expect((error as RecordTooLargeError).details).toMatchObject({ executionId: 'e1', bytes, limit: json.length });
  });

  it('counts bytes only when the text may be over (at most 3 UTF-8 bytes per UTF-16 unit)', () => {
    const tooLarge = (bytes: number): Error => new Error(`over: ${bytes}`);
    expect(() => checkJsonBytes('€'.repeat(10), 30, tooLarge)).not.toThrow(); // 30 bytes: at the limit
    expect(() => checkJsonBytes('€'.repeat(10), 29, tooLarge)).toThrow('over: 30');
    expect(() => checkJsonBytes('a'.repeat(29), 29, tooLarge)).not.toThrow();
    expect(() => checkJsonBytes('a'.repeat(30), 29, tooLarge)).toThrow('over: 30');
  });
});
