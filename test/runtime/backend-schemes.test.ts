/**
 * The one table of backend URL schemes: Redis URLs name the Redis backend, a Postgres URL names a
 * backend not available yet, anything else none — both refusals typed, with a JSON round trip.
 */
import { describe, expect, test } from 'vitest';
import { BackendUnavailableError, errorFromJSON } from '../../src/index.js';
import { availableSchemes, BACKEND_SCHEMES, backendOfUrl } from '../../src/runtime/backend-schemes.js';

describe('backendOfUrl', () => {
  test('redis:// and rediss:// name the Redis backend; what is not a URL names none', () => {
    expect(backendOfUrl('redis://127.0.0.1:6379')).toBe('redis');
    expect(backendOfUrl('rediss://user:secret@cache:6380/2')).toBe('redis');
    expect(backendOfUrl('not a url')).toBeUndefined();
    expect(availableSchemes()).toEqual(['redis:', 'rediss:']);
  });

  test('postgres:// is a backend not available yet: BackendUnavailableError naming it, password redacted', () => {
    let thrown: unknown;
    try {
      backendOfUrl('postgres://app:secret@db:5432/app');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BackendUnavailableError);
    expect(thrown).toMatchObject({
      code: 'backend_unavailable',
      details: { scheme: 'postgres:', backend: 'postgres', available: ['redis:', 'rediss:'] },
    });
    const message = (thrown as Error).message;
    expect(message).toContain('the postgres backend is not available yet');
    expect(message).not.toContain('secret');
    const back = errorFromJSON(JSON.parse(JSON.stringify(thrown)) as never);
    expect(back).toBeInstanceOf(BackendUnavailableError);
    expect(back).toMatchObject({ code: 'backend_unavailable', details: { backend: 'postgres' } });
    expect(() => backendOfUrl('postgresql://db/app')).toThrow(BackendUnavailableError);
  });

  test('a scheme of no backend: BackendUnavailableError without a backend', () => {
    expect(() => backendOfUrl('http://cache:6379')).toThrow(
      '"http://cache:6379" is not a URL of a backend (scheme http:); expected redis://host[:port] or rediss://host[:port]',
    );
    expect(() => backendOfUrl('http://cache:6379')).toThrow(
      expect.objectContaining({ details: { scheme: 'http:', available: ['redis:', 'rediss:'] } }) as Error,
    );
  });

  test('the table is the only place a scheme is mapped, and inherited keys are not schemes', () => {
    expect(Object.isFrozen(BACKEND_SCHEMES)).toBe(true);
    expect(() => backendOfUrl('constructor://x')).toThrow(BackendUnavailableError);
  });
});
