/**
 * An interrupt step's declaration: its payload contract and settings, validated into a frozen
 * `InterruptSpec`, and the validation of a resume payload. Re-exported by `interrupt.ts`; the
 * builder (`reactor/builder.ts`) and the graph's interrupt node (`reactor/nodes.ts`) import it from here.
 *
 * @module
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { DefinitionError, type FieldIssue } from '../errors.js';
import {
  compileContract,
  validateContract,
  type Contract,
  type ContractOutcome,
  type ContractOutput,
  type Fields,
} from './contract.js';
import { parseDuration, type Duration } from './duration.js';

/** A payload contract: a field map (one Standard Schema per field, like step inputs) or one Standard Schema. */
export type PayloadSchema = Fields | StandardSchemaV1;

/** The validated payload type of a {@link PayloadSchema}: what the interrupt step produces. */
export type PayloadOf<P> = P extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<P>
  : P extends Fields
    ? ContractOutput<P>
    : never;

/** What `timeout` does when it passes: `lazy` is checked when a resume arrives; `active` schedules a job that fails the run. */
export type TimeoutStrategy = 'lazy' | 'active';

/**
 * The options of an interrupt step besides its arguments (see `ReactorBuilder.interrupt`).
 * Coordination (`lock`, `semaphore`, `rateLimit`, `period`, `orderedLock`) is refused here:
 * a paused execution holds nothing, so declare coordination on the reactor instead.
 */
export interface InterruptSettings<Args, P extends PayloadSchema> {
  /** The payload a resume must deliver. */
  readonly payload: P;
  /** A unique id the execution can be resumed by (`engine.resume({ correlationId }, …)`), from the step's arguments. */
  readonly correlationId?: (args: Args) => string;
  /** How long the execution may stay paused. Default: no timeout. */
  readonly timeout?: Duration;
  /** `lazy` (default): the timeout is checked when a resume arrives. `active`: a job fails the run when it passes (needs a queue). */
  readonly timeoutStrategy?: TimeoutStrategy;
  /** Invalid payloads accepted before the run rolls back and ends failed (the last invalid one ends it). Default 1; `Infinity`: never. */
  readonly maxAttempts?: number;
  /** Where the resumed run continues: `inline` (default: in the caller of `resume`) or `background` (a worker). */
  readonly resume?: 'inline' | 'background';
}

/** The validated, frozen form of an interrupt declaration. */
export interface InterruptSpec {
  readonly payload:
    | { readonly kind: 'fields'; readonly contract: Contract }
    | { readonly kind: 'schema'; readonly schema: StandardSchemaV1 };
  readonly correlationId: ((args: never) => unknown) | undefined;
  readonly timeoutMs: number | undefined;
  readonly timeoutStrategy: TimeoutStrategy;
  /** 0 = unlimited (JSON-safe form of `Infinity`). */
  readonly maxAttempts: number;
  readonly resume: 'inline' | 'background';
}

const COORDINATION = ['lock', 'semaphore', 'rateLimit', 'period', 'orderedLock'] as const;

interface Where {
  readonly reactor: string;
  readonly step: string;
}

function fail(where: Where, message: string): never {
  throw new DefinitionError(
    `reactor "${where.reactor}", interrupt "${where.step}": ${message}`,
    where.reactor,
    where.step,
  );
}

function isSchema(value: unknown): value is StandardSchemaV1 {
  return typeof value === 'object' && value !== null && '~standard' in value;
}

/** Validates interrupt settings (R-16: no coordination on an interrupt step). */
export function interruptSpec(where: Where, settings: InterruptSettings<never, PayloadSchema>): InterruptSpec {
  const o = (settings ?? {}) as Partial<InterruptSettings<never, PayloadSchema>> & Record<string, unknown>;
  const declared = COORDINATION.filter((k) => o[k] !== undefined);
  if (declared.length > 0) {
    fail(
      where,
      `declares ${declared.join(', ')}, but an interrupt step cannot coordinate (a paused execution holds nothing); declare it on the reactor instead (withLock, withSemaphore, withRateLimit, withPeriod, withOrderedLock)`,
    );
  }
  const payload = o.payload;
  if (typeof payload !== 'object' || payload === null)
    fail(where, 'needs a payload: a field map of Standard Schemas or one Standard Schema');
  if (!isSchema(payload) && !Object.values(payload).every(isSchema))
    fail(where, 'payload must be a Standard Schema or a field map whose values are Standard Schemas');
  if (o.correlationId !== undefined && typeof o.correlationId !== 'function')
    fail(where, 'correlationId must be a function of the step arguments');
  const timeoutMs = o.timeout === undefined ? undefined : parseDuration(o.timeout);
  if (o.timeout !== undefined && (timeoutMs === undefined || timeoutMs <= 0))
    fail(where, `timeout is not a positive duration (got ${JSON.stringify(o.timeout)})`);
  const strategy = o.timeoutStrategy ?? 'lazy';
  if (strategy !== 'lazy' && strategy !== 'active')
    fail(where, `timeoutStrategy must be 'lazy' or 'active' (got ${JSON.stringify(strategy)})`);
  const max = o.maxAttempts ?? 1;
  if (max !== Infinity && (!Number.isInteger(max) || max < 1))
    fail(where, `maxAttempts must be an integer >= 1 or Infinity (got ${String(max)})`);
  const resume = o.resume ?? 'inline';
  if (resume !== 'inline' && resume !== 'background')
    fail(where, `resume must be 'inline' or 'background' (got ${JSON.stringify(resume)})`);
  return Object.freeze({
    payload: isSchema(payload)
      ? { kind: 'schema' as const, schema: payload }
      : { kind: 'fields' as const, contract: compileContract(payload) },
    correlationId: o.correlationId,
    timeoutMs: timeoutMs === undefined ? undefined : Math.ceil(timeoutMs),
    timeoutStrategy: strategy,
    maxAttempts: max === Infinity ? 0 : max,
    resume,
  });
}

/** Validates a resume payload against the interrupt's contract. */
export async function validatePayload(spec: InterruptSpec, value: unknown): Promise<ContractOutcome> {
  if (spec.payload.kind === 'fields') return validateContract(spec.payload.contract, value);
  const result = await spec.payload.schema['~standard'].validate(value);
  if (!result.issues) return { ok: true, value: result.value as Record<string, unknown> };
  const issues: FieldIssue[] = result.issues.map((i) => ({
    path: (i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.'),
    message: i.message,
  }));
  return { ok: false, issues };
}
