import { describe, expect, it } from 'vitest';
import { MalformedJobError } from '../../src/errors.js';
import { fromBullmqJobId, toBullmqJobId } from '../../src/queue/job-id.js';
import { decodeJob, encodeJob } from '../../src/queue/payload.js';

describe('job payload codec', () => {
  it('round-trips a job and keeps only the known fields', () => {
    const job = { v: 1, executionId: 'e1', reactor: 'orders' } as const;
    expect(decodeJob(JSON.parse(JSON.stringify(encodeJob(job))))).toEqual(job);
    expect(decodeJob({ ...job, extra: true })).toEqual(job);
  });

  it.each([
    ['a string', 'e1', /expected an object, got string/],
    ['null', null, /expected an object, got null/],
    ['an array', [1], /expected an object, got an array/],
    ['no version', { executionId: 'e1', reactor: 'r' }, /missing format version/],
    ['another version', { v: 2, executionId: 'e1', reactor: 'r' }, /of another version: v=2/],
    ['a string version', { v: '1', executionId: 'e1', reactor: 'r' }, /of another version: v="1"/],
    ['no execution id', { v: 1, reactor: 'r' }, /missing field `executionId`/],
    ['a numeric reactor', { v: 1, executionId: 'e1', reactor: 7 }, /field `reactor` must be a string, got number/],
    ['an empty execution id', { v: 1, executionId: '', reactor: 'r' }, /field `executionId` must not be empty/],
  ])('rejects %s with MalformedJobError', (_label, payload, message) => {
    let caught: unknown;
    try {
      decodeJob(payload);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(MalformedJobError);
    expect((caught as MalformedJobError).code).toBe('job_malformed');
    expect((caught as Error).message).toMatch(message);
  });
});

describe('BullMQ job ids', () => {
  it.each(['e1:1', 'abc', '42', '-7', '%N1', '100%:3A', '12:', ':', 'a%25b', '0x1'])(
    'maps %j reversibly to an id BullMQ accepts',
    (id) => {
      const mapped = toBullmqJobId(id);
      expect(mapped).not.toContain(':');
      expect(`${parseInt(mapped, 10)}`).not.toBe(mapped);
      expect(fromBullmqJobId(mapped)).toBe(id);
    },
  );

  it('leaves plain ids readable', () => {
    expect(toBullmqJobId('exec-1_a')).toBe('exec-1_a');
    expect(toBullmqJobId('exec-1:2')).toBe('exec-1%3A2');
  });

  it('maps different ids to different ids', () => {
    const ids = ['a:b', 'a%3Ab', 'a%253Ab', '1', '%N1', '%251'];
    expect(new Set(ids.map(toBullmqJobId)).size).toBe(ids.length);
  });
});
