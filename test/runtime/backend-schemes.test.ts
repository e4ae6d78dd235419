/**
 * The one table of backend URL schemes: Redis URLs name the Redis backend, Postgres URLs the
 * PostgreSQL backend, anything else none — refused typed, with a JSON round trip.
 */
import { describe, expect, test } from 'vitest';
import { BackendUnavailableError, errorFromJSON } from '../../src/index.js';
import { availableSchemes, BACKEND_SCHEMES, backendOfUrl } from '../../src/runtime/backend-schemes.js';

const SERVED = ['redis:', 'rediss:', 'postgres:', 'postgresql:'];

describe('backendOfUrl', () => {
  test('redis:// and rediss:// name the Redis backend; what is not a URL names none', () => {
    expect(backendOfUrl('redis://127.0.0.1:6379')).toBe('redis');
    expect(backendOfUrl('rediss://user:secret@cache:6380/2')).toBe('redis');
    expect(backendOfUrl('not a url')).toBeUndefined();
    expect(availableSchemes()).toEqual(SERVED);
  });

  test('postgres:// and postgresql:// name the PostgreSQL backend', () => {
    expect(backendOfUrl('postgres://app:secret@db:5432/app')).toBe('postgres');
    expect(backendOfUrl('postgresql://db/app')).toBe('postgres');
  });

  test('a scheme not served: BackendUnavailableError naming the schemes served, password redacted, JSON round trip', () => {
    let thrown: unknown;
    try {
      backendOfUrl('mysql://app:secret@db:3306/app');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BackendUnavailableError);
    expect(thrown).toMatchObject({ code: 'backend_unavailable', details: { scheme: 'mysql:', available: SERVED } });
    expect((thrown as Error).message).not.toContain('secret');
    const back = errorFromJSON(JSON.parse(JSON.stringify(thrown)) as never);
    expect(back).toBeInstanceOf(BackendUnavailableError);
  });

  test('a scheme of no backend: BackendUnavailableError without a backend', () => {
    expect(() => backendOfUrl('http://cache:6379')).toThrow(
      '"http://cache:6379" is not a URL of a backend (scheme http:); expected redis://host[:port] or rediss://host[:port] or postgres://host[:port] or postgresql://host[:port]',
    );
    expect(() => backendOfUrl('http://cache:6379')).toThrow(
      expect.objectContaining({ details: { scheme: 'http:', available: SERVED } }) as Error,
    );
  });

  test('the table is the only place a scheme is mapped, and inherited keys are not schemes', () => {
    expect(Object.isFrozen(BACKEND_SCHEMES)).toBe(true);
    expect(() => backendOfUrl('constructor://x')).toThrow(BackendUnavailableError);
  });
});
