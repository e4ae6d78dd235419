/**
 * Three tiny Standard Schemas for the demo, so the `ts-reactor` command needs no schema
 * library at run time. Any Standard Schema works the same way (zod, valibot, arktype …).
 *
 * @module
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';

function schema<I, O>(validate: (value: unknown) => StandardSchemaV1.Result<O>): StandardSchemaV1<I, O> {
  return { '~standard': { version: 1, vendor: 'ts-reactor-demo', validate } };
}

const issue = (message: string): StandardSchemaV1.FailureResult => ({ issues: [{ message }] });

/** A non-empty string. */
export function text(): StandardSchemaV1<string, string> {
  return schema((v) => (typeof v === 'string' && v.length > 0 ? { value: v } : issue('expected a non-empty string')));
}

/** An integer above zero. */
export function positiveInt(): StandardSchemaV1<number, number> {
  return schema((v) =>
    typeof v === 'number' && Number.isInteger(v) && v > 0 ? { value: v } : issue('expected an integer > 0'),
  );
}

/** `inner`, or `fallback` when the value is missing (so the field becomes optional). */
export function withDefault<T>(inner: StandardSchemaV1<T, T>, fallback: T): StandardSchemaV1<T | undefined, T> {
  return schema((v) =>
    v === undefined ? { value: fallback } : (inner['~standard'].validate(v) as StandardSchemaV1.Result<T>),
  );
}
