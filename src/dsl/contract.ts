import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FieldIssue } from '../errors.js';

/**
 * An input contract: one Standard Schema (zod, valibot, arktype …) per field. A field whose
 * schema accepts `undefined` (an optional field, or one with a default) may be omitted.
 */
export type Fields = Readonly<Record<string, StandardSchemaV1>>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type OptionalKeys<F extends Fields> = {
  [K in keyof F]: undefined extends StandardSchemaV1.InferInput<F[K]> ? K : never;
}[keyof F];
type RequiredKeys<F extends Fields> = Exclude<keyof F, OptionalKeys<F>>;

/** What a caller passes: fields that accept `undefined` are optional. */
export type ContractInput<F extends Fields> = Simplify<
  { -readonly [K in RequiredKeys<F>]: StandardSchemaV1.InferInput<F[K]> } & {
    -readonly [K in OptionalKeys<F>]?: StandardSchemaV1.InferInput<F[K]>;
  }
>;
/** What the body receives: validated values, defaults applied. */
export type ContractOutput<F extends Fields> = Simplify<{
  -readonly [K in keyof F]: StandardSchemaV1.InferOutput<F[K]>;
}>;

/** Options of an input contract. */
export interface ContractOptions<F extends Fields> {
  /** Fields whose values are secrets: hidden in logs, events, the trace and the dashboard. */
  readonly redact?: readonly (keyof F & string)[];
}

/** A compiled contract: the fields, which are required, which are redacted. */
export interface Contract {
  readonly fields: Fields;
  readonly required: readonly string[];
  readonly redact: readonly string[];
}

/** Compiles a field map. A field is required when its schema rejects `undefined`. */
export function compileContract(fields: Fields, redact: readonly string[] = []): Contract {
  const required = Object.keys(fields).filter((name) => {
    const outcome = fields[name]!['~standard'].validate(undefined);
    return outcome instanceof Promise ? true : outcome.issues !== undefined;
  });
  return Object.freeze({
    fields: Object.freeze({ ...fields }),
    required: Object.freeze(required),
    redact: Object.freeze([...redact]),
  });
}

/** The outcome of validating a value against a contract. */
export type ContractOutcome =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly issues: readonly FieldIssue[] };

/**
 * Validates `value` field by field (unknown fields are dropped). Synchronous when every schema
 * is; a schema that validates asynchronously makes it return a promise.
 */
export function validateContract(contract: Contract, value: unknown): ContractOutcome | Promise<ContractOutcome> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      issues: [
        {
          path: '',
          message: `expected an object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
        },
      ],
    };
  }
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const issues: FieldIssue[] = [];
  const pending: Promise<void>[] = [];
  for (const [name, schema] of Object.entries(contract.fields)) {
    const settle = (r: StandardSchemaV1.Result<unknown>): void => {
      if (r.issues)
        for (const issue of r.issues) issues.push({ path: joinPath(name, issue.path), message: issue.message });
      else if (r.value !== undefined || name in source) out[name] = r.value;
    };
    const r = schema['~standard'].validate(source[name]);
    if (r instanceof Promise) pending.push(r.then(settle));
    else settle(r);
  }
  const finish = (): ContractOutcome => (issues.length > 0 ? { ok: false, issues } : { ok: true, value: out });
  return pending.length > 0 ? Promise.all(pending).then(finish) : finish();
}

/** A copy of `value` with the contract's redacted fields replaced by `'[redacted]'`. */
export function redactFields(contract: Contract | undefined, value: unknown): unknown {
  if (!contract || contract.redact.length === 0 || typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const name of contract.redact) if (name in copy) copy[name] = '[redacted]';
  return copy;
}

function joinPath(name: string, path: StandardSchemaV1.Issue['path']): string {
  const parts = [name, ...(path ?? []).map((p) => String(typeof p === 'object' ? p.key : p))];
  return parts.join('.');
}
