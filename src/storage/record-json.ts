/**
 * The JSON text of events and of the records whose traces hold them, with each event serialized
 * once. A run's events go out twice: to the execution stream as they happen, and in the trace of
 * every checkpoint after them (with every step persisted, a three-step run writes its record four
 * times). The text of an event is kept beside it (a `WeakMap`, gone with the event), and a
 * record's trace is written from those texts. Events are never changed once emitted: a trace
 * bound replaces entries with new ones, and a repeat replaces an entry with a new object. A store
 * measures what it writes here too, before anything is sent.
 *
 * @module
 */
import { RecordTooLargeError } from '../errors.js';
import type { ReactorEvent } from '../ports/events.js';
import type { ExecutionRecord } from '../ports/store.js';

const texts = new WeakMap<ReactorEvent, string>();

/** `JSON.stringify(event)`, computed once per event object. */
export function eventJson(event: ReactorEvent): string {
  let text = texts.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    texts.set(event, text);
  }
  return text;
}

/**
 * The JSON text of `record`: what `JSON.stringify(record)` gives, with the same members and values
 * (the trace written last), each trace entry from {@link eventJson}.
 */
export function recordJson(record: ExecutionRecord): string {
  const trace = record.trace;
  if (trace === undefined || trace.length === 0) return JSON.stringify(record);
  const { trace: _trace, ...rest } = record;
  const head = JSON.stringify(rest);
  let text = head.length > 2 ? `${head.slice(0, -1)},"trace":[` : '{"trace":[';
  for (let i = 0; i < trace.length; i++) text += i === 0 ? eventJson(trace[i]!) : `,${eventJson(trace[i]!)}`;
  return `${text}]}`;
}

/**
 * {@link recordJson}, refused when over `maxRecordBytes` UTF-8 bytes.
 * @throws RecordTooLargeError naming the record, its size and the limit.
 */
export function limitedRecordJson(record: ExecutionRecord, maxRecordBytes: number): string {
  const json = recordJson(record);
  checkJsonBytes(json, maxRecordBytes, (bytes) => new RecordTooLargeError(record.id, bytes, maxRecordBytes));
  return json;
}

/** Throws `tooLarge(bytes)` when `json` is over `limit` UTF-8 bytes (counted only when it may be). */
export function checkJsonBytes(json: string, limit: number, tooLarge: (bytes: number) => Error): void {
  if (json.length <= limit / 3) return; // UTF-8 needs at most 3 bytes per UTF-16 unit
  const bytes = Buffer.byteLength(json);
  if (bytes > limit) throw tooLarge(bytes);
}
